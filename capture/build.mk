# capture/: agentxdp-capture and the shared pcapng writer.
IO_SRCS += capture/pcapng_writer.c
