/* bth_opcodes.h: each BTH opcode's name and extended headers, one table for the XDP program and the decoder. */
#ifndef AGENTXDP_BTH_OPCODES_H
#define AGENTXDP_BTH_OPCODES_H

/*
 * bpf/roce_capture.bpf.c includes this file as well as lib/decode/roce_decode.c, so it
 * holds macros and integer constants only: no libc, no types. The names are string
 * literals in macro arguments; a user that does not use them never compiles them.
 */

/* Extended transport headers (IBA 9.3); the same bits as roce_pkt.headers (ROCE_H_*). */
#define BTH_H_RETH (1u << 2)
#define BTH_H_AETH (1u << 3)
#define BTH_H_ATOMICETH (1u << 4)
#define BTH_H_ATOMICACKETH (1u << 5)
#define BTH_H_IMMDT (1u << 6)
#define BTH_H_IETH (1u << 7)
#define BTH_H_DETH (1u << 8)
#define BTH_H_XRCETH (1u << 9)
#define BTH_H_RDETH (1u << 10)
/*
 * Not a header: a CNP's 16 reserved bytes after the BTH (RoCE v2 annex A17.9). The capture
 * keeps them as part of the headers; the decoder counts them as payload.
 */
#define BTH_H_CNP_RESERVED (1u << 15)

/* Bytes of each (IBA 9.3.1-9.3.6, XRC annex A14.3). */
#define BTH_RDETH_LEN 4
#define BTH_DETH_LEN 8
#define BTH_XRCETH_LEN 4
#define BTH_RETH_LEN 16
#define BTH_ATOMICETH_LEN 28
#define BTH_AETH_LEN 4
#define BTH_ATOMICACKETH_LEN 8
#define BTH_IMMDT_LEN 4
#define BTH_IETH_LEN 4
#define BTH_CNP_RESERVED_LEN 16

/* Bytes after the BTH for a set of BTH_H_* bits: a constant expression. */
#define BTH_HEADERS_LEN(h)                                                                     \
	(((h) & BTH_H_RDETH ? BTH_RDETH_LEN : 0) + ((h) & BTH_H_DETH ? BTH_DETH_LEN : 0) +        \
	 ((h) & BTH_H_XRCETH ? BTH_XRCETH_LEN : 0) + ((h) & BTH_H_RETH ? BTH_RETH_LEN : 0) +      \
	 ((h) & BTH_H_ATOMICETH ? BTH_ATOMICETH_LEN : 0) + ((h) & BTH_H_AETH ? BTH_AETH_LEN : 0) + \
	 ((h) & BTH_H_ATOMICACKETH ? BTH_ATOMICACKETH_LEN : 0) +                                  \
	 ((h) & BTH_H_IMMDT ? BTH_IMMDT_LEN : 0) + ((h) & BTH_H_IETH ? BTH_IETH_LEN : 0) +        \
	 ((h) & BTH_H_CNP_RESERVED ? BTH_CNP_RESERVED_LEN : 0))

/* Transport bases, the top three bits of the opcode (IBA 9.2, table 38). */
#define BTH_TR_RC 0x00
#define BTH_TR_UC 0x20
#define BTH_TR_RD 0x40
#define BTH_TR_UD 0x60
#define BTH_TR_XRC 0xa0
#define BTH_OPCODE_CNP 0x81

/*
 * The table (IBA 9.2, table 38 "header sequences"): X(opcode, name, headers) for every
 * defined opcode. Opcodes not listed (reserved, vendor 0xc0-0xff) carry the BTH only.
 */
#define BTH_REQ_OPS(X, tr, pfx, req)                                                           \
	X((tr) | 0x00, pfx " SEND First", (req))                                               \
	X((tr) | 0x01, pfx " SEND Middle", (req))                                              \
	X((tr) | 0x02, pfx " SEND Last", (req))                                                \
	X((tr) | 0x03, pfx " SEND Last with Immediate", (req) | BTH_H_IMMDT)                   \
	X((tr) | 0x04, pfx " SEND Only", (req))                                                \
	X((tr) | 0x05, pfx " SEND Only with Immediate", (req) | BTH_H_IMMDT)                   \
	X((tr) | 0x06, pfx " RDMA WRITE First", (req) | BTH_H_RETH)                            \
	X((tr) | 0x07, pfx " RDMA WRITE Middle", (req))                                        \
	X((tr) | 0x08, pfx " RDMA WRITE Last", (req))                                          \
	X((tr) | 0x09, pfx " RDMA WRITE Last with Immediate", (req) | BTH_H_IMMDT)             \
	X((tr) | 0x0a, pfx " RDMA WRITE Only", (req) | BTH_H_RETH)                             \
	X((tr) | 0x0b, pfx " RDMA WRITE Only with Immediate", (req) | BTH_H_RETH | BTH_H_IMMDT)

#define BTH_READ_ATOMIC_OPS(X, tr, pfx, req, resp)                                             \
	X((tr) | 0x0c, pfx " RDMA READ Request", (req) | BTH_H_RETH)                           \
	X((tr) | 0x0d, pfx " RDMA READ Response First", (resp) | BTH_H_AETH)                   \
	X((tr) | 0x0e, pfx " RDMA READ Response Middle", (resp))                               \
	X((tr) | 0x0f, pfx " RDMA READ Response Last", (resp) | BTH_H_AETH)                    \
	X((tr) | 0x10, pfx " RDMA READ Response Only", (resp) | BTH_H_AETH)                    \
	X((tr) | 0x11, pfx " Acknowledge", (resp) | BTH_H_AETH)                                \
	X((tr) | 0x12, pfx " ATOMIC Acknowledge", (resp) | BTH_H_AETH | BTH_H_ATOMICACKETH)    \
	X((tr) | 0x13, pfx " CmpSwap", (req) | BTH_H_ATOMICETH)                                \
	X((tr) | 0x14, pfx " FetchAdd", (req) | BTH_H_ATOMICETH)

#define BTH_INVALIDATE_OPS(X, tr, pfx, req)                                                    \
	X((tr) | 0x16, pfx " SEND Last with Invalidate", (req) | BTH_H_IETH)                   \
	X((tr) | 0x17, pfx " SEND Only with Invalidate", (req) | BTH_H_IETH)

#define BTH_OPCODES(X)                                                                         \
	BTH_REQ_OPS(X, BTH_TR_RC, "RC", 0)                                                     \
	BTH_READ_ATOMIC_OPS(X, BTH_TR_RC, "RC", 0, 0)                                          \
	BTH_INVALIDATE_OPS(X, BTH_TR_RC, "RC", 0)                                              \
	/* UC: SEND and RDMA WRITE only. */                                                    \
	BTH_REQ_OPS(X, BTH_TR_UC, "UC", 0)                                                     \
	/* RD: requests carry RDETH + DETH, responses RDETH (IBA 9.3.1, 9.3.2). */             \
	BTH_REQ_OPS(X, BTH_TR_RD, "RD", BTH_H_RDETH | BTH_H_DETH)                              \
	BTH_READ_ATOMIC_OPS(X, BTH_TR_RD, "RD", BTH_H_RDETH | BTH_H_DETH, BTH_H_RDETH)         \
	X(BTH_TR_RD | 0x15, "RD RESYNC", BTH_H_RDETH | BTH_H_DETH)                             \
	/* UD: SEND Only (with immediate) and DETH. */                                         \
	X(BTH_TR_UD | 0x04, "UD SEND Only", BTH_H_DETH)                                        \
	X(BTH_TR_UD | 0x05, "UD SEND Only with Immediate", BTH_H_DETH | BTH_H_IMMDT)           \
	/* RoCE v2 congestion notification packet: BTH + 16 reserved bytes. */                 \
	X(BTH_OPCODE_CNP, "CNP", BTH_H_CNP_RESERVED)                                           \
	/* XRC: requests carry XRCETH right after the BTH; responses are as RC's. */           \
	BTH_REQ_OPS(X, BTH_TR_XRC, "XRC", BTH_H_XRCETH)                                        \
	BTH_READ_ATOMIC_OPS(X, BTH_TR_XRC, "XRC", BTH_H_XRCETH, 0)                             \
	BTH_INVALIDATE_OPS(X, BTH_TR_XRC, "XRC", BTH_H_XRCETH)

/*
 * Bytes after the BTH the capture keeps by opcode, as an array initializer:
 * `static const __u8 t[256] = BTH_HEADER_BYTES_INIT;`. The XDP program's table; the unit
 * test builds the same one to hold it against the decoder.
 */
#define BTH_HEADER_BYTES_ENTRY(op, name, hdrs) [op] = BTH_HEADERS_LEN(hdrs),
#define BTH_HEADER_BYTES_INIT { BTH_OPCODES(BTH_HEADER_BYTES_ENTRY) }

#endif
