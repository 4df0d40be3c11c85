"""The peer for the packet network: ns-2 (Debian's 2.35, with the LBNL RED and CBQ code) running the
same scenarios as the tests, its results parsed."""
from __future__ import annotations

import shutil
import subprocess

RED_DUMBBELL = r"""
set ns [new Simulator]
set n {flows}
set until {until}
Queue/RED set thresh_ 5
Queue/RED set maxthresh_ 15
Queue/RED set q_weight_ 0.002
Queue/RED set linterm_ 10
Queue/RED set gentle_ false
Queue/RED set setbit_ false
Queue/RED set wait_ false
Queue/RED set queue_in_bytes_ false
Queue/RED set mean_pktsize_ 1040
Agent/TCP set window_ 64
Agent/TCP set packetSize_ 1000
set r1 [$ns node]
set r2 [$ns node]
$ns duplex-link $r1 $r2 10Mb 20ms RED
$ns queue-limit $r1 $r2 50
set qmon [$ns monitor-queue $r1 $r2 ""]
for {{set i 0}} {{$i < $n}} {{incr i}} {{
  set s($i) [$ns node]
  set d($i) [$ns node]
  $ns duplex-link $s($i) $r1 100Mb [expr ($i + 1)]ms DropTail
  $ns duplex-link $r2 $d($i) 100Mb 1ms DropTail
  $ns queue-limit $s($i) $r1 1000
  set tcp($i) [new Agent/TCP/Reno]
  set sink($i) [new Agent/TCPSink]
  $ns attach-agent $s($i) $tcp($i)
  $ns attach-agent $d($i) $sink($i)
  $ns connect $tcp($i) $sink($i)
  set ftp($i) [new Application/FTP]
  $ftp($i) attach-agent $tcp($i)
  $ns at 0.0 "$ftp($i) start"
}}
proc finish {{}} {{
  global n tcp qmon until
  set acked 0
  set timeouts 0
  for {{set i 0}} {{$i < $n}} {{incr i}} {{
    set acked [expr $acked + [$tcp($i) set ack_]]
    set timeouts [expr $timeouts + [$tcp($i) set nrexmit_]]
  }}
  set integ [$qmon get-pkts-integrator]
  puts "$acked $timeouts [$qmon set parrivals_] [$qmon set pdrops_] [expr [$integ set sum_] / $until]"
  exit 0
}}
$ns at $until "finish"
$ns run
"""

CBQ_SHARES = r"""
set ns [new Simulator]
set a [$ns node]
set r1 [$ns node]
set r2 [$ns node]
$ns duplex-link $a $r1 100Mb 1ms DropTail
$ns queue-limit $a $r1 1000
$ns simplex-link $r1 $r2 10Mb 10ms CBQ/WRR
$ns simplex-link $r2 $r1 10Mb 10ms DropTail
set cbqlink [$ns link $r1 $r2]
set top [new CBQClass]
$top setparams none 0 1.0 auto 8 2 0
set c1 [new CBQClass]
$c1 setparams $top {borrow} {share1} auto 1 1 0
set c2 [new CBQClass]
$c2 setparams $top {borrow} {share2} auto 1 1 0
foreach c [list $c1 $c2] {{
  set q [new Queue/DropTail]
  $q set limit_ 50
  $c install-queue $q
}}
$cbqlink insert $top
$cbqlink insert $c1
$cbqlink insert $c2
$cbqlink bind $c1 1
$cbqlink bind $c2 2
foreach i {{1 2}} {{
  set udp($i) [new Agent/UDP]
  $udp($i) set fid_ $i
  $ns attach-agent $a $udp($i)
  set mon($i) [new Agent/LossMonitor]
  $ns attach-agent $r2 $mon($i)
  $ns connect $udp($i) $mon($i)
  set cbr($i) [new Application/Traffic/CBR]
  $cbr($i) set packetSize_ 1000
  $cbr($i) set rate_ {rate1}Mb
  $cbr($i) attach-agent $udp($i)
}}
$cbr(2) set rate_ {rate2}Mb
if {{{rate1} > 0}} {{ $ns at 0.0 "$cbr(1) start" }}
if {{{rate2} > 0}} {{ $ns at 0.0 "$cbr(2) start" }}
proc finish {{}} {{
  global mon
  puts "[$mon(1) set bytes_] [$mon(2) set bytes_]"
  exit 0
}}
$ns at {until} "finish"
$ns run
"""


def available() -> bool:
    return shutil.which("ns") is not None


def _run(script: str, tmp_path) -> list:
    path = tmp_path / "scenario.tcl"
    path.write_text(script)
    out = subprocess.run(["ns", str(path)], capture_output=True, text=True, timeout=600, check=True).stdout
    return [float(x) for x in out.split()]


def red_dumbbell(tmp_path, *, flows: int = 4, until: float = 50.0) -> dict:
    """``flows`` TCP Reno flows (1000-byte segments, window 64) through a 10 Mbit/s, 20 ms RED
    bottleneck (5/15 packets, w 0.002, max_p 0.1, limit 50), access links of 1, 2, ... ms."""
    acked, timeouts, arrivals, drops, mean_q = _run(RED_DUMBBELL.format(flows=flows, until=until), tmp_path)
    return {"delivered_bytes": acked * 1000, "timeouts": timeouts, "arrivals": arrivals, "drops": drops,
            "mean_packets": mean_q}


def cbq_shares(tmp_path, *, borrow: bool, shares=(0.3, 0.7), rates_mbps=(8, 8), until: float = 20.0) -> tuple:
    """Two CBQ classes of a 10 Mbit/s link, each fed by a UDP CBR source of 1000-byte packets;
    the bytes each delivers."""
    b1, b2 = _run(CBQ_SHARES.format(borrow="true" if borrow else "false", share1=shares[0], share2=shares[1],
                                    rate1=rates_mbps[0], rate2=rates_mbps[1], until=until), tmp_path)
    return b1, b2
