# lib/: the one library every tool links. This file is the only place its sources are declared.
#
#   util/      logging, checked number parsing, text buffers, sorting, robust statistics, util.h,
#              bpf_util (the BPF tools' capability check and libbpf log callback)
#   decode/    RoCE v2 and InfiniBand frames -> struct roce_pkt (pure, bounds-checked)
#   trace/     pcap/pcapng reading (with the capture's drop counters), pcap-filter selection
#              (libpcap's compiler, per link type) and the pcapng writer
#   track/     per-QP request/ACK timelines -> struct flow_stats
#   localize/  topology, signals, the search for the slow or lossy link -> struct finding
#   store/     the SQLite database of an analysis
#   export/    JSON, CSV, Prometheus text, OTLP, metric registries, safe output files
#   agent/     agent mode: the live tracker and the /metrics server
#   capture/   the reader of the XDP program's per-CPU rings, the --filter parser
#   report/    database -> text, markdown, HTML, gnuplot charts
#   nic/       RDMA NIC counters from sysfs, rates and findings
#   drops/     kernel drop reasons and functions -> names
#   model/     the RC transport model and the frame builder (synthesizer, emulator, tests)
#
# Three archives: the core (no I/O: what the fuzzers and the live agent drive), the I/O
# code around it, and the model. docs/lib.md draws what each part may call.

LIB_CORE_SRCS := \
	lib/util/log.c lib/util/parse_num.c lib/util/text_buf.c lib/util/sort_u32.c \
	lib/util/robust_stats.c lib/util/util.c lib/util/sanitize.c \
	lib/decode/roce_decode.c lib/decode/roce_tunnel.c lib/decode/ib_decode.c \
	lib/decode/frame_kind.c \
	lib/trace/pcapng_drops.c lib/trace/pcapng_frames.c \
	lib/track/qp_track.c lib/track/qp_track_read.c lib/track/qp_pairing.c lib/track/flow_table.c lib/track/flow_window.c \
	lib/track/psn_ring.c lib/track/sample_defer.c lib/track/latency_set.c lib/track/latency_hist.c lib/track/track_mem.c \
	lib/track/qp_shards.c lib/track/read_queue.c \
	lib/localize/localize.c lib/localize/localize_model.c lib/localize/localize_signals.c \
	lib/localize/localize_search.c lib/localize/localize_fabric.c lib/localize/localize_evidence.c \
	lib/localize/localize_quiet.c lib/localize/localize_floor.c lib/localize/localize_classify.c \
	lib/localize/localize_pooled.c \
	lib/localize/localize_timer.c \
	lib/localize/localize_marks.c \
	lib/localize/localize_overflow.c \
	lib/localize/localize_busy.c \
	lib/localize/localize_each.c \
	lib/localize/localize_onset.c \
	lib/localize/localize_responder.c \
	lib/localize/topology_graph.c lib/localize/finding.c lib/localize/hop_groups.c \
	lib/export/metrics.c lib/export/prom_text.c lib/export/otlp_json.c lib/export/agent_metrics.c \
	lib/nic/nic_rates.c

LIB_IO_SRCS := \
	lib/trace/trace_reader.c lib/trace/trace_span.c lib/trace/trace_filter.c lib/trace/pcapng_writer.c \
	lib/localize/topology.c \
	lib/store/store_sqlite.c lib/store/store_links.c lib/store/store_latency.c lib/store/store_retx.c lib/store/store_spill.c \
	lib/store/store_kept.c \
	lib/store/store_owner.c \
	lib/export/export_json.c lib/export/export_csv.c lib/export/export_file.c lib/export/otlp_push.c \
	lib/agent/live_agent.c lib/agent/metrics_http.c \
	lib/capture/cpu_ring.c lib/capture/capture_filter.c lib/capture/capture_iface.c \
	lib/report/report_data.c lib/report/report_render.c lib/report/report_charts.c \
	lib/report/report_write.c lib/report/gnuplot_run.c lib/report/report_fabric.c \
	lib/nic/sysfs_counters.c lib/nic/nic_sensor.c lib/nic/nic_db.c \
	lib/drops/drop_names.c lib/util/bpf_util.c

LIB_MODEL_SRCS := lib/model/rc_model.c lib/model/roce_frame.c lib/model/emu_icrc.c

# What the library needs from the system; a tool links $(AGENTXDP_LIBS) $(LIB_LDLIBS), and the
# linker keeps only the libraries whose code the tool pulled in.
LIB_LDLIBS := -Wl,--as-needed -lpcap -lsqlite3 -lcsv -lmicrohttpd -lcurl -lpthread -lz -Wl,--no-as-needed

CORE_SRCS  += $(LIB_CORE_SRCS)
IO_SRCS    += $(LIB_IO_SRCS)
MODEL_SRCS += $(LIB_MODEL_SRCS)
UNIT_LIBS  += $(LIB_LDLIBS)
