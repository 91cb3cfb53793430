# capture/: agentxdp-capture. The XDP side is bpf/roce_capture.bpf.c -> build/roce_capture.skel.h
# (bpf/build.mk); capture.c loads, attaches and drains it; capture_main.c is the command line.
CAPTURE_SRCS := capture/capture.c capture/capture_main.c
CAPTURE_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(CAPTURE_SRCS))
TOOLS += $(BIN)/agentxdp-capture
MAN_PAGES += docs/agentxdp-capture.8

$(CAPTURE_OBJS): $(BUILD)/roce_capture.skel.h
$(BIN)/agentxdp-capture: $(CAPTURE_OBJS) $(AGENTXDP_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $(CAPTURE_OBJS) $(AGENTXDP_LIBS) -lbpf -lelf $(LIB_LDLIBS) $(LDLIBS) -o $@
