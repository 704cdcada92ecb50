# The peer of cogmesh's simulator for one TCP flow over a plain chain, for
# Debian's ns-2 (package ns2, ns-2.35). bench/ns2.ts runs it next to cogmesh's
# config/scenarios/urbanx-chain.json with --cognitive off --pn off.
#
#   ns bench/peers/ns2-chain.tcl HOPS DURATION_S SEED [WINDOW_PACKETS]
#
# HOPS+1 static nodes 200 m apart on a line, 802.11 at 2 Mbps (DSSS, long
# preamble, RTS/CTS off), AODV, one TCP Reno flow with an FTP source from node
# 0 to the last node, 1000-byte segments, from START_S to DURATION_S. No trace
# or NAM file is written. It prints a few lines for people and one for
# programs, e.g.
#
#   RESULT hops=4 seed=1 goodput_mbps=0.412345 start=1 stop=100 window=20 ...
#
# goodput_mbps is the payload bytes the sink delivered in order to its
# application (TCPSink's bytes_) times 8 over the FTP's active time
# (stop - start), which is what cogmesh reports as a TCP flow's goodputMbps.
#
# Every MAC/PHY setting below is set explicitly, with what it matches in
# cogmesh (radio/medium/phy.ts phy80211b(2e6), radio/medium/propagation.ts,
# radio/medium/medium.ts, config/scenarios/urbanx-chain.json), even where it
# is ns-2's default, so that a change of ns-2's defaults cannot go unnoticed.

proc usage {msg} {
    puts stderr "ns2-chain.tcl: $msg"
    puts stderr "usage: ns ns2-chain.tcl HOPS DURATION_S SEED \[WINDOW_PACKETS\]"
    exit 2
}

if {$argc < 3 || $argc > 4} { usage "expected 3 or 4 arguments, got $argc" }
set hops     [lindex $argv 0]
set duration [lindex $argv 1]
set seed     [lindex $argv 2]
set window   [expr {$argc == 4 ? [lindex $argv 3] : 20}]
if {![string is integer -strict $hops] || $hops < 1 || $hops > 64} { usage "HOPS \"$hops\" is not an integer from 1 to 64" }
if {![string is double -strict $duration] || $duration <= 10} { usage "DURATION_S \"$duration\" is not a number of seconds > 10" }
# ns-2 takes seed 0 as "seed from the clock": not reproducible, so refused.
if {![string is integer -strict $seed] || $seed < 1 || $seed > 2147483647} { usage "SEED \"$seed\" is not an integer from 1 to 2147483647" }
if {![string is integer -strict $window] || $window < 1} { usage "WINDOW_PACKETS \"$window\" is not an integer >= 1" }

# ---- Scenario ----------------------------------------------------------------

set nn       [expr {$hops + 1}]
set spacing  200.0    ;# urbanx-chain.json topology.spacingM
set txRange  250.0    ;# urbanx-chain.json medium.txRangeM
set csRange  550.0    ;# urbanx-chain.json medium.csRangeM
set pktSize  1000     ;# TCP payload per segment (bytes), as the flow's packetBytes
# FTP start (s), the scenario's default: cogmesh's routers learn their
# neighbours' R1 channels from the first HELLOs (about 2 s) and a SYN sent
# before that has no channel to go on. cogmesh's flow gets the same startS.
set start    5.0
set stop     $duration

# ---- PHY: TwoRayGround and the thresholds for 250 m / 550 m -------------------
#
# cogmesh's medium is ns-2's TwoRayGround with ns-2's default radio
# (radio/medium/propagation.ts: Pt 0.28183815 W, unit gains, antennas 1.5 m
# up, L = 1) and takes the receive threshold as the power at txRangeM and the
# carrier-sense threshold as the power at csRangeM on the channel's
# frequency. These are the same formulas as ns-2's
# indep-utils/propagation/threshold.cc (TwoRayGround: Friis below the
# crossover distance 4*pi*ht*hr/lambda, Pt*Gt*Gr*ht^2*hr^2/(d^4*L) beyond).

set Pt     0.28183815   ;# = TWO_RAY_GROUND.txPowerW (ns-2 default Pt_)
set Gt     1.0          ;# = txGain (OmniAntenna Gt_ default)
set Gr     1.0          ;# = rxGain (OmniAntenna Gr_ default)
set ht     1.5          ;# = antennaHeightM (OmniAntenna Z_ default)
set hr     1.5
set L      1.0          ;# = systemLoss (ns-2 default L_)
# cogmesh computes powers on its channel's centre frequency (2.4 GHz plan,
# channel n at 2407 + 5n MHz); ns-2's default is 914 MHz. Both thresholds lie
# beyond the crossover distance at either frequency (86 m at 914 MHz, 227 m
# at 2.412 GHz), so they do not depend on it; the frequency only sets the
# power at 200 m (Friis at 2.4 GHz, two-ray at 914 MHz), which matters for
# capture (10 dB) alone: 200 m against 400 m is 10.9 dB at 2.412 GHz, 12 dB
# at 914 MHz, a capture either way (both give the same results). Channel 1 of
# cogmesh's plan is used.
set freq   2.412e9
set pi     3.14159265358979323846
set lambda [expr {299792458.0 / $freq}]

proc twoRayPr {d} {
    global Pt Gt Gr ht hr L lambda pi
    set crossover [expr {4.0 * $pi * $ht * $hr / $lambda}]
    if {$d < $crossover} {
        return [expr {$Pt * $Gt * $Gr * $lambda * $lambda / (pow(4.0 * $pi, 2) * $d * $d * $L)}]
    }
    return [expr {$Pt * $Gt * $Gr * $ht * $ht * $hr * $hr / (pow($d, 4) * $L)}]
}

set rxThresh [twoRayPr $txRange]   ;# 3.65262e-10 W: ns-2's own default RXThresh_ (250 m)
set csThresh [twoRayPr $csRange]   ;# 1.55924e-11 W: ns-2's own default CSThresh_ (550 m)

Phy/WirelessPhy set Pt_        $Pt
Phy/WirelessPhy set L_         $L
Phy/WirelessPhy set freq_      $freq
Phy/WirelessPhy set RXThresh_  $rxThresh   ;# = medium.ts rxThresh: power at txRangeM 250 m
Phy/WirelessPhy set CSThresh_  $csThresh   ;# = medium.ts csThresh: power at csRangeM 550 m
Phy/WirelessPhy set CPThresh_  10.0        ;# = medium.captureDb 10: a frame survives one 10 dB weaker
# (but in ns-2 only the frame that arrived first can capture: a later frame
# 10 dB stronger still collides with it; in cogmesh either one can)
Phy/WirelessPhy set bandwidth_ 2e6         ;# = medium.dataRateMbps 2 (informational in ns-2's 802.11)
Antenna/OmniAntenna set X_  0
Antenna/OmniAntenna set Y_  0
Antenna/OmniAntenna set Z_  $ht
Antenna/OmniAntenna set Gt_ $Gt
Antenna/OmniAntenna set Gr_ $Gr

# ---- MAC: 802.11b DSSS at 2 Mbps (radio/medium/phy.ts phy80211b(2e6)) ------------

Mac/802_11 set dataRate_         2Mb        ;# = dataRateBps 2e6 (medium.dataRateMbps 2): unicast and broadcast data
Mac/802_11 set basicRate_        1Mb        ;# = basicRateBps 1e6: ACK (and RTS/CTS) at 1 Mbps
Mac/802_11 set SlotTime_         0.000020   ;# = slotUs 20
Mac/802_11 set SIFS_             0.000010   ;# = sifsUs 10; ns-2's DIFS = SIFS + 2 slots = 50 us = difsUs
Mac/802_11 set CWMin_            31         ;# = cwMin 31
Mac/802_11 set CWMax_            1023       ;# = cwMax 1023
Mac/802_11 set PreambleLength_   144        ;# long preamble, 144 bits ...
Mac/802_11 set PLCPHeaderLength_ 48         ;# ... + 48-bit PLCP header ...
Mac/802_11 set PLCPDataRate_     1.0e6      ;# ... at 1 Mbps = 192 us = plcpUs 192 (ACK: 192 + 14*8 = 304 us in both)
Mac/802_11 set RTSThreshold_     3000       ;# = rtsThresholdBytes Infinity (medium.rtsCts false): above any frame, RTS/CTS off
Mac/802_11 set ShortRetryLimit_  7          ;# = shortRetryLimit 7: attempts of a frame sent without RTS
Mac/802_11 set LongRetryLimit_   4          ;# = longRetryLimit 4 (unused with RTS/CTS off)
# Equal without a setting: ns-2's ACK frame is 14 bytes = ackBytes 14 (304 us
# at 1 Mbps with the PLCP), EIFS = SIFS + DIFS + ACK time = 364 us = medium.ts
# eifsUs, broadcast data goes at dataRate_ as in cogmesh.
# Not settable: ns-2.35's data MAC header is the 4-address one, 30 bytes + 4
# FCS = 34 (its MAC trace shows 1040-byte TCP/IP segments as 1098-byte frames
# with the 24-byte PLCP), cogmesh's macHeaderBytes is 28: 24 us more per data
# frame at 2 Mbps (4488 against 4464 us for a full segment, 0.5%).
# LL's default 25 us per packet has no counterpart in cogmesh's router.
LL set delay_ 0us

# ---- TCP -------------------------------------------------------------------------
#
# ns-2's one-way TCP Reno with a TCPSink (an ACK per segment, no delayed ACK).
# window_ is the receiver's advertised window: cwnd never exceeds it. ns-2's
# default is 20 packets; cogmesh's side is given the same number.

Agent/TCP set packetSize_ $pktSize   ;# segment payload; ns-2 adds 40 bytes of TCP/IP header (tcpip_base_hdr_size_)
Agent/TCP set window_     $window

# ---- The run -----------------------------------------------------------------------

ns-random $seed
$defaultRNG seed $seed

set ns [new Simulator]
# ns-2's wireless nodes need a trace file to build their drop targets; nothing
# is kept (set NS2_CHAIN_TRACE to a file name to keep ns-2's trace of the run).
set traceFile [expr {[info exists env(NS2_CHAIN_TRACE)] ? $env(NS2_CHAIN_TRACE) : "/dev/null"}]
set tf [open $traceFile w]
$ns trace-all $tf
set topo [new Topography]
$topo load_flatgrid [expr {int($hops * $spacing) + 100}] 100
create-god $nn

set chan [new Channel/WirelessChannel]
$ns node-config -adhocRouting AODV \
    -llType LL \
    -macType Mac/802_11 \
    -ifqType Queue/DropTail/PriQueue \
    -ifqLen 50 \
    -antType Antenna/OmniAntenna \
    -propType Propagation/TwoRayGround \
    -phyType Phy/WirelessPhy \
    -channel $chan \
    -topoInstance $topo \
    -agentTrace OFF \
    -routerTrace OFF \
    -macTrace OFF \
    -movementTrace OFF

for {set i 0} {$i < $nn} {incr i} {
    set node($i) [$ns node]
    $node($i) random-motion 0
    $node($i) set X_ [expr {$i * $spacing}]
    $node($i) set Y_ 50.0
    $node($i) set Z_ 0.0
}

set tcp [new Agent/TCP/Reno]
set sink [new Agent/TCPSink]
$ns attach-agent $node(0) $tcp
$ns attach-agent $node($hops) $sink
$ns connect $tcp $sink
set ftp [new Application/FTP]
$ftp attach-agent $tcp
$ns at $start "$ftp start"

proc finish {} {
    global ns tf tcp sink hops seed start stop pktSize window rxThresh csThresh wallStart
    # TCPSink's bytes_ counts whole segments as handed to the application in
    # order, TCP/IP header included, and the 40-byte SYN that ns-2's one-way
    # TCP sends first as sequence number 0 (syn_ true); data segments are
    # numbered from 1 and all carry packetSize_ bytes (FTP has data without end).
    set hdr [Agent/TCP set tcpip_base_hdr_size_]
    set bytes [$sink set bytes_]
    set syn [expr {[Agent/TCP set syn_] && $bytes >= $hdr ? $hdr : 0}]
    set segments [expr {($bytes - $syn) / ($pktSize + $hdr)}]
    if {($bytes - $syn) % ($pktSize + $hdr) != 0} {
        puts stderr "ns2-chain.tcl: the sink's $bytes bytes are not whole segments of $pktSize + $hdr bytes"
    }
    set goodput [expr {$segments * $pktSize * 8.0 / ($stop - $start) / 1e6}]
    # The sender's highest cumulative ACK (the SYN is 0): segments acknowledged.
    set acked [expr {max(0, [$tcp set ack_])}]
    set ackedGoodput [expr {$acked * $pktSize * 8.0 / ($stop - $start) / 1e6}]
    set wall [expr {([clock clicks -milliseconds] - $wallStart) / 1000.0}]
    puts [format "ns-2 chain: %d hop(s), seed %d, TCP Reno window %d packets, %d-byte segments, FTP %g-%g s: goodput %.6f Mbps" \
        $hops $seed $window $pktSize $start $stop $goodput]
    puts [format "RESULT hops=%d seed=%d goodput_mbps=%.6f acked_goodput_mbps=%.6f start=%g stop=%g window=%d packet_bytes=%d delivered_packets=%d acked_packets=%d data_packets=%d rexmit_packets=%d timeouts=%d cwnd_cuts=%d rx_thresh=%.6g cs_thresh=%.6g sim_wall_s=%.3f" \
        $hops $seed $goodput $ackedGoodput $start $stop $window $pktSize $segments $acked \
        [$tcp set ndatapack_] [$tcp set nrexmitpack_] [$tcp set nrexmit_] [$tcp set ncwndcuts_] \
        $rxThresh $csThresh $wall]
    close $tf
    $ns halt
}

# The nodes do not move; nothing else is scheduled.
$ns at $stop "finish"
set wallStart [clock clicks -milliseconds]
$ns run
