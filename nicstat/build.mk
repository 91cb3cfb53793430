# nicstat/: agentxdp-nicstat (RDMA NIC counters from sysfs), and the metric exporters
# every tool shares (analyze/metrics, prom_text, otlp_json: pure; otlp_push, export_file: I/O).
CORE_SRCS += analyze/text_buf.c analyze/metrics.c analyze/prom_text.c analyze/otlp_json.c
IO_SRCS   += analyze/otlp_push.c analyze/export_file.c
UNIT_LIBS += -lcurl -lmicrohttpd -lpthread
