// A RED dumbbell in ns-3, as pysim's bench runs it: N TCP flows (LinuxReno), 10 Mbit/s 20 ms bottleneck.
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"
#include <chrono>
#include <iostream>
using namespace ns3;
int main(int argc, char *argv[]) {
  uint32_t n = 4; double until = 50.0;
  CommandLine cmd; cmd.AddValue("flows", "flows", n); cmd.AddValue("until", "seconds", until); cmd.Parse(argc, argv);
  Config::SetDefault("ns3::TcpL4Protocol::SocketType", StringValue("ns3::TcpLinuxReno"));
  Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1000));
  Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
  Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(false));
  NodeContainer routers; routers.Create(2);
  NodeContainer srcs; srcs.Create(n); NodeContainer dsts; dsts.Create(n);
  InternetStackHelper stack; stack.InstallAll();
  PointToPointHelper bott; bott.SetDeviceAttribute("DataRate", StringValue("10Mbps")); bott.SetChannelAttribute("Delay", StringValue("20ms"));
  NetDeviceContainer bd = bott.Install(routers.Get(0), routers.Get(1));
  TrafficControlHelper red; red.SetRootQueueDisc("ns3::RedQueueDisc", "MinTh", DoubleValue(5), "MaxTh", DoubleValue(15),
      "MaxSize", QueueSizeValue(QueueSize("50p")), "QW", DoubleValue(0.002), "LInterm", DoubleValue(10));
  red.Install(bd);
  Ipv4AddressHelper addr; addr.SetBase("10.0.0.0", "255.255.255.0"); addr.Assign(bd);
  PointToPointHelper acc; acc.SetDeviceAttribute("DataRate", StringValue("100Mbps"));
  std::vector<Ipv4Address> dstAddr;
  for (uint32_t i = 0; i < n; i++) {
    acc.SetChannelAttribute("Delay", TimeValue(MilliSeconds(i + 1)));
    NetDeviceContainer a = acc.Install(srcs.Get(i), routers.Get(0));
    acc.SetChannelAttribute("Delay", StringValue("1ms"));
    NetDeviceContainer b = acc.Install(routers.Get(1), dsts.Get(i));
    addr.NewNetwork(); addr.Assign(a); addr.NewNetwork(); Ipv4InterfaceContainer bi = addr.Assign(b);
    dstAddr.push_back(bi.GetAddress(1));
  }
  Ipv4GlobalRoutingHelper::PopulateRoutingTables();
  std::vector<Ptr<PacketSink>> sinks;
  for (uint32_t i = 0; i < n; i++) {
    BulkSendHelper src("ns3::TcpSocketFactory", InetSocketAddress(dstAddr[i], 9000));
    src.SetAttribute("MaxBytes", UintegerValue(0));
    src.Install(srcs.Get(i)).Start(Seconds(0.0));
    PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), 9000));
    ApplicationContainer s = sink.Install(dsts.Get(i)); s.Start(Seconds(0.0));
    sinks.push_back(DynamicCast<PacketSink>(s.Get(0)));
  }
  Simulator::Stop(Seconds(until));
  auto t0 = std::chrono::steady_clock::now();
  Simulator::Run();
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  uint64_t rx = 0; for (auto &s : sinks) rx += s->GetTotalRx();
  std::cout << rx << " " << wall << std::endl;
  Simulator::Destroy();
  return 0;
}
