# tests/nicstat/fixture.sh: build sysfs trees as RDMA drivers lay them out, for
# agentxdp-nicstat's tests. Source it, then e.g.:
#   fx_root "$T/sys"                       # empty sysfs: class/ only
#   fx_mlx5 "$T/sys" mlx5_0 eth2           # one mlx5 RoCE port, netdev via device/net
#   fx_set  "$T/sys" mlx5_0 1 hw_counters np_cnp_sent 1000
# Counter names are the drivers' own (Linux drivers/infiniband: mlx5 counters.c,
# bnxt_re hw_counters.c, hns_roce_main.c, sw/rxe/rxe_hw_counters.c; the IB PMA port
# counters of core/sysfs.c; the netdev statistics of net-sysfs.c). Every counter starts
# at 0 unless set.

# IB PMA port counters (ports/N/counters), as ib_core creates them.
FX_PMA_COUNTERS="excessive_buffer_overrun_errors link_downed link_error_recovery
local_link_integrity_errors multicast_rcv_packets multicast_xmit_packets
port_rcv_constraint_errors port_rcv_data port_rcv_errors port_rcv_packets
port_rcv_remote_physical_errors port_rcv_switch_relay_errors port_xmit_constraint_errors
port_xmit_data port_xmit_discards port_xmit_packets port_xmit_wait symbol_error
unicast_rcv_packets unicast_xmit_packets VL15_dropped"

FX_MLX5_HW="duplicate_request implied_nak_seq_err local_ack_timeout_err np_cnp_sent
np_ecn_marked_roce_packets out_of_buffer out_of_sequence packet_seq_err req_cqe_error
req_cqe_flush_error req_remote_access_errors req_remote_invalid_request resp_cqe_error
resp_cqe_flush_error resp_local_length_error resp_remote_access_errors rnr_nak_retry_err
roce_adp_retrans roce_adp_retrans_to roce_slow_restart roce_slow_restart_cnps
roce_slow_restart_trans rp_cnp_handled rp_cnp_ignored rx_atomic_requests rx_icrc_encapsulated
rx_read_requests rx_write_requests"

FX_RXE_HW="sent_pkts rcvd_pkts duplicate_request out_of_seq_request rcvd_rnr_err send_rnr_err
rcvd_seq_err ack_deferred retry_exceeded_err retry_rnr_exceeded_err completer_retry_err
send_err link_downed rdma_sends rdma_recvs"

FX_HNS_HW="aeqe ceqe cmds cmds_err posted_mbx polled_mbx mbx_event qp_create_err qp_modify_err
cq_create_err srq_create_err xrcd_alloc_err mr_reg_err mr_rereg_err ah_create_err mmap_err
uctx_alloc_err rx_rc_pkt rx_uc_pkt rx_ud_pkt rx_xrc_pkt rx_pkt rx_err_pkt rx_cnp_pkt tx_rc_pkt
tx_uc_pkt tx_ud_pkt tx_xrc_pkt tx_pkt tx_err_pkt tx_cnp_pkt trp_get_mpt_err_pkt
trp_get_irrl_err_pkt ecn_db rx_buf trp_rx_sof cq_cqe cq_poe cq_notify"

FX_BNXT_HW="active_pds active_ahs active_qps active_rc_qps active_ud_qps active_srqs active_cqs
active_mrs active_mws watermark_pds watermark_ahs watermark_qps watermark_rc_qps
watermark_ud_qps watermark_srqs watermark_cqs watermark_mrs watermark_mws rx_pkts rx_bytes
tx_pkts tx_bytes recoverable_errors tx_roce_errors tx_roce_discards rx_roce_errors
rx_roce_discards local_ack_timeout_err packet_seq_err max_retry_exceeded rnr_nak_retry_err
implied_nak_seq_err unrecoverable_err bad_resp_err local_qp_op_err local_protection_err
mem_mgmt_op_err req_remote_invalid_request req_remote_access_errors remote_op_err
duplicate_request res_exceed_max resp_local_length_error res_exceeds_wqe res_opcode_err
res_rx_invalid_rkey res_rx_domain_err res_rx_no_perm res_rx_range_err res_tx_invalid_rkey
res_tx_domain_err res_tx_no_perm res_tx_range_err res_irrq_oflow res_unsup_opcode
res_unaligned_atomic res_rem_inv_err res_mem_err res_srq_err res_cmp_err res_invalid_dup_rkey
res_wqe_format_err res_cq_load_err res_srq_load_err res_tx_pci_err res_rx_pci_err
out_of_sequence tx_atomic_req tx_read_req tx_read_resp tx_write_req tx_send_req
rx_atomic_requests rx_read_requests rx_read_resp rx_write_requests rx_send_req rx_good_pkts
rx_good_bytes out_of_buffer np_cnp_sent rp_cnp_handled np_ecn_marked_roce_packets
roce_adp_retrans roce_adp_retrans_to roce_slow_restart roce_slow_restart_cnps
roce_slow_restart_trans rp_cnp_ignored rx_icrc_encapsulated"

FX_NETDEV_STATS="collisions multicast rx_bytes rx_compressed rx_crc_errors rx_dropped
rx_errors rx_fifo_errors rx_frame_errors rx_length_errors rx_missed_errors rx_nohandler
rx_over_errors rx_packets tx_aborted_errors tx_bytes tx_carrier_errors tx_compressed
tx_dropped tx_errors tx_fifo_errors tx_heartbeat_errors tx_packets tx_window_errors"

fx_root() { mkdir -p "$1/class/net"; }

# fx_counters DIR NAMES...: one file per name, value 0.
fx_counters() {
	local dir=$1 n
	shift
	mkdir -p "$dir"
	for n in $*; do echo 0 >"$dir/$n"; done
}

# fx_netdev ROOT NAME: /sys/class/net/NAME/statistics.
fx_netdev() { fx_counters "$1/class/net/$2/statistics" "$FX_NETDEV_STATS"; }

# fx_port ROOT DEV PORT: state and link layer of a RoCE port.
fx_port() {
	local p=$1/class/infiniband/$2/ports/$3
	mkdir -p "$p"
	echo "4: ACTIVE" >"$p/state"
	echo "Ethernet" >"$p/link_layer"
}

# fx_gid_ndev ROOT DEV PORT NETDEV: gid_attrs/ndevs as ib_core shows them. Entry 0 has no
# netdev (a folder here, so reading it fails as an unpopulated GID entry does).
fx_gid_ndev() {
	local g=$1/class/infiniband/$2/ports/$3/gid_attrs/ndevs
	mkdir -p "$g/0"
	echo "$4" >"$g/1"
	echo "$4" >"$g/2"
}

# mlx5: PMA counters + hw_counters (with lifespan) per port; netdev under device/net.
fx_mlx5() {
	local root=$1 dev=$2 netdev=$3 port=${4:-1}
	fx_port "$root" "$dev" "$port"
	fx_counters "$root/class/infiniband/$dev/ports/$port/counters" "$FX_PMA_COUNTERS"
	fx_counters "$root/class/infiniband/$dev/ports/$port/hw_counters" "$FX_MLX5_HW"
	echo 10 >"$root/class/infiniband/$dev/ports/$port/hw_counters/lifespan"
	mkdir -p "$root/class/infiniband/$dev/device/net/$netdev"
	echo $((port - 1)) >"$root/class/infiniband/$dev/device/net/$netdev/dev_port"
	fx_netdev "$root" "$netdev"
}

# rxe (soft RoCE): hw_counters only, netdev named by the parent file.
fx_rxe() {
	local root=$1 dev=$2 netdev=$3
	fx_port "$root" "$dev" 1
	fx_counters "$root/class/infiniband/$dev/ports/1/hw_counters" "$FX_RXE_HW"
	echo 10 >"$root/class/infiniband/$dev/ports/1/hw_counters/lifespan"
	echo "$netdev" >"$root/class/infiniband/$dev/parent"
	fx_netdev "$root" "$netdev"
}

# hns (HiSilicon): hw_counters; netdev from gid_attrs.
fx_hns() {
	local root=$1 dev=$2 netdev=$3
	fx_port "$root" "$dev" 1
	fx_counters "$root/class/infiniband/$dev/ports/1/hw_counters" "$FX_HNS_HW"
	echo 10 >"$root/class/infiniband/$dev/ports/1/hw_counters/lifespan"
	fx_gid_ndev "$root" "$dev" 1 "$netdev"
	fx_netdev "$root" "$netdev"
}

# bnxt_re (Broadcom): PMA counters + hw_counters; netdev under device/net.
fx_bnxt() {
	local root=$1 dev=$2 netdev=$3
	fx_port "$root" "$dev" 1
	fx_counters "$root/class/infiniband/$dev/ports/1/counters" "$FX_PMA_COUNTERS"
	fx_counters "$root/class/infiniband/$dev/ports/1/hw_counters" "$FX_BNXT_HW"
	echo 10 >"$root/class/infiniband/$dev/ports/1/hw_counters/lifespan"
	mkdir -p "$root/class/infiniband/$dev/device/net/$netdev"
	echo 0 >"$root/class/infiniband/$dev/device/net/$netdev/dev_port"
	fx_netdev "$root" "$netdev"
}

# fx_set ROOT DEV PORT SOURCE NAME VALUE   (SOURCE: counters | hw_counters | netdev:IFNAME)
fx_set() {
	local root=$1 dev=$2 port=$3 src=$4 name=$5 value=$6
	case $src in
	netdev:*) echo "$value" >"$root/class/net/${src#netdev:}/statistics/$name" ;;
	*) echo "$value" >"$root/class/infiniband/$dev/ports/$port/$src/$name" ;;
	esac
}

# fx_count_files ROOT: counter files nicstat should report (lifespan excluded), counted
# independently of the tool: every regular file under counters/hw_counters of each port
# plus the netdev statistics of the netdevs the fixture bound.
fx_count_files() {
	local root=$1 n
	n=$(find "$root/class/infiniband" -path '*/ports/*/counters/*' -type f -o \
		-path '*/ports/*/hw_counters/*' -type f ! -name lifespan | wc -l)
	echo $((n + $(find "$root/class/net" -path '*/statistics/*' -type f | wc -l)))
}
