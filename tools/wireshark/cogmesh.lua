-- Wireshark dissector for cogmesh's mesh packets: the R3 control messages
-- (RREQ, RREP, RERR, HELLO, PREFIX) with their optional authentication
-- trailer, and the DATA headers (types 0x20 and 0x21). The layouts are those
-- of docs/wire.md; captures (`cogmesh sim --pcap`, `cogmesh node --pcap`,
-- docs/pcap.md) carry the packets behind LLC/SNAP with the IEEE 802 local
-- experimental ethertype 0x88b5, which this dissector registers on.
--
--   wireshark -X lua_script:tools/wireshark/cogmesh.lua r0.pcapng
--   tshark -X lua_script:tools/wireshark/cogmesh.lua -r r0.pcapng -Y cogmesh.hello
--
-- A packet that is cut short or has bytes left over is marked with expert
-- info (group Malformed) and dissected as far as it goes; nothing throws.

local ETHERTYPE = 0x88b5
local AUTH_TRAILER_BYTES = 43
local AUTH_TRAILER_TAG = 0xa8

local p = Proto("cogmesh", "cogmesh mesh packet")

local TYPES = {
  [0x01] = "RREQ", [0x02] = "RREP", [0x03] = "RERR", [0x10] = "HELLO", [0x11] = "PREFIX",
  [0x20] = "DATA", [0x21] = "DATA with flow label",
}
local PROTOS = { [17] = "udp", [6] = "tcp", [0] = "raw", [4] = "ip4 (IPv4 packet)", [41] = "ip6 (IPv6 packet)" }

local F = {
  type = ProtoField.uint8("cogmesh.type", "Type", base.HEX, TYPES),
  version = ProtoField.uint8("cogmesh.version", "Version", base.DEC),
  -- RREQ
  rreq = ProtoField.none("cogmesh.rreq", "RREQ"),
  rreq_flags = ProtoField.uint8("cogmesh.rreq.flags", "Flags", base.HEX),
  rreq_j = ProtoField.bool("cogmesh.rreq.flags.j", "J (join)", 8, nil, 0x80),
  rreq_r = ProtoField.bool("cogmesh.rreq.flags.r", "R (repair)", 8, nil, 0x40),
  rreq_g = ProtoField.bool("cogmesh.rreq.flags.g", "G (gratuitous RREP)", 8, nil, 0x20),
  rreq_d = ProtoField.bool("cogmesh.rreq.flags.d", "D (destination only)", 8, nil, 0x10),
  rreq_u = ProtoField.bool("cogmesh.rreq.flags.u", "U (unknown sequence number)", 8, nil, 0x08),
  rreq_hops = ProtoField.uint8("cogmesh.rreq.hop_count", "Hop count", base.DEC),
  rreq_id = ProtoField.uint32("cogmesh.rreq.id", "RREQ ID", base.DEC),
  rreq_dst = ProtoField.uint16("cogmesh.rreq.dst", "Destination", base.DEC),
  rreq_dst_seq = ProtoField.uint32("cogmesh.rreq.dst_seq", "Destination sequence number", base.DEC),
  rreq_orig = ProtoField.uint16("cogmesh.rreq.orig", "Originator", base.DEC),
  rreq_orig_seq = ProtoField.uint32("cogmesh.rreq.orig_seq", "Originator sequence number", base.DEC),
  rreq_ttl = ProtoField.uint8("cogmesh.rreq.ttl", "TTL", base.DEC),
  rreq_first_hop = ProtoField.uint16("cogmesh.rreq.first_hop", "First hop (AOMDV)", base.DEC),
  rreq_cost = ProtoField.uint32("cogmesh.rreq.path_cost", "Path cost (thousandths)", base.DEC),
  -- RREP
  rrep = ProtoField.none("cogmesh.rrep", "RREP"),
  rrep_flags = ProtoField.uint8("cogmesh.rrep.flags", "Flags", base.HEX),
  rrep_r = ProtoField.bool("cogmesh.rrep.flags.r", "R (repair)", 8, nil, 0x80),
  rrep_a = ProtoField.bool("cogmesh.rrep.flags.a", "A (acknowledgment required)", 8, nil, 0x40),
  rrep_hops = ProtoField.uint8("cogmesh.rrep.hop_count", "Hop count", base.DEC),
  rrep_dst = ProtoField.uint16("cogmesh.rrep.dst", "Destination", base.DEC),
  rrep_dst_seq = ProtoField.uint32("cogmesh.rrep.dst_seq", "Destination sequence number", base.DEC),
  rrep_orig = ProtoField.uint16("cogmesh.rrep.orig", "Originator", base.DEC),
  rrep_lifetime = ProtoField.uint32("cogmesh.rrep.lifetime_ms", "Lifetime (ms)", base.DEC),
  rrep_last_hop = ProtoField.uint16("cogmesh.rrep.last_hop", "Last hop (AOMDV)", base.DEC),
  rrep_cost = ProtoField.uint32("cogmesh.rrep.path_cost", "Path cost (thousandths)", base.DEC),
  -- RERR
  rerr = ProtoField.none("cogmesh.rerr", "RERR"),
  rerr_flags = ProtoField.uint8("cogmesh.rerr.flags", "Flags", base.HEX),
  rerr_n = ProtoField.bool("cogmesh.rerr.flags.n", "N (no delete)", 8, nil, 0x80),
  rerr_count = ProtoField.uint8("cogmesh.rerr.dest_count", "Destination count", base.DEC),
  rerr_dst = ProtoField.uint16("cogmesh.rerr.dst", "Unreachable destination", base.DEC),
  rerr_dst_seq = ProtoField.uint32("cogmesh.rerr.dst_seq", "Destination sequence number", base.DEC),
  -- HELLO
  hello = ProtoField.none("cogmesh.hello", "HELLO"),
  hello_src = ProtoField.uint16("cogmesh.hello.src", "Source", base.DEC),
  hello_seq = ProtoField.uint32("cogmesh.hello.seq", "Sequence number", base.DEC),
  hello_r1 = ProtoField.uint8("cogmesh.hello.r1_channel", "R1 channel", base.DEC),
  hello_count = ProtoField.uint8("cogmesh.hello.workload_count", "Workload entries", base.DEC),
  hello_w_channel = ProtoField.uint8("cogmesh.hello.workload.channel", "Channel", base.DEC),
  hello_w = ProtoField.uint16("cogmesh.hello.workload.w", "w (1/65535)", base.DEC),
  hello_w_windows = ProtoField.uint32("cogmesh.hello.workload.windows", "Sensing windows", base.DEC),
  hello_ncount = ProtoField.uint8("cogmesh.hello.neighbour_count", "Neighbour entries", base.DEC),
  hello_n_addr = ProtoField.uint16("cogmesh.hello.neighbour.addr", "Neighbour", base.DEC),
  hello_n_r1 = ProtoField.uint8("cogmesh.hello.neighbour.r1_channel", "Its R1 channel", base.DEC),
  -- PREFIX
  prefix = ProtoField.none("cogmesh.prefix", "PREFIX"),
  prefix_orig = ProtoField.uint16("cogmesh.prefix.orig", "Originator", base.DEC),
  prefix_seq = ProtoField.uint32("cogmesh.prefix.seq", "Sequence number", base.DEC),
  prefix_hops = ProtoField.uint8("cogmesh.prefix.hop_count", "Hop count", base.DEC),
  prefix_ttl = ProtoField.uint8("cogmesh.prefix.ttl", "TTL", base.DEC),
  prefix_lifetime = ProtoField.uint16("cogmesh.prefix.lifetime_s", "Lifetime (s)", base.DEC),
  prefix_count = ProtoField.uint8("cogmesh.prefix.count", "Prefixes", base.DEC),
  prefix_version = ProtoField.uint8("cogmesh.prefix.ip_version", "IP version", base.DEC),
  prefix_length = ProtoField.uint8("cogmesh.prefix.length", "Prefix length", base.DEC),
  prefix_ip4 = ProtoField.ipv4("cogmesh.prefix.ipv4", "Network"),
  prefix_ip6 = ProtoField.ipv6("cogmesh.prefix.ipv6", "Network"),
  -- Authentication trailer
  auth = ProtoField.none("cogmesh.auth", "Authentication trailer"),
  auth_key = ProtoField.uint16("cogmesh.auth.key_id", "Key ID", base.DEC),
  auth_index = ProtoField.uint32("cogmesh.auth.index", "Index", base.DEC),
  auth_pc = ProtoField.uint32("cogmesh.auth.pc", "Packet counter", base.DEC),
  auth_mac = ProtoField.bytes("cogmesh.auth.mac", "MAC (HMAC-SHA-256)"),
  auth_tag = ProtoField.uint8("cogmesh.auth.tag", "Tag", base.HEX),
  -- DATA
  data = ProtoField.none("cogmesh.data", "DATA"),
  data_ttl = ProtoField.uint8("cogmesh.data.ttl", "TTL", base.DEC),
  data_proto = ProtoField.uint8("cogmesh.data.proto", "Protocol", base.DEC, PROTOS),
  data_src = ProtoField.uint16("cogmesh.data.src", "Source", base.DEC),
  data_dst = ProtoField.uint16("cogmesh.data.dst", "Destination", base.DEC),
  data_flow = ProtoField.uint16("cogmesh.data.flow", "Flow", base.DEC),
  data_seq = ProtoField.uint32("cogmesh.data.seq", "Sequence number", base.DEC),
  data_label = ProtoField.uint24("cogmesh.data.label", "Flow label", base.HEX, nil, 0x0fffff),
  data_payload = ProtoField.bytes("cogmesh.data.payload", "Payload"),
}
local fieldList = {}
for _, v in pairs(F) do fieldList[#fieldList + 1] = v end
p.fields = fieldList

local E = {
  truncated = ProtoExpert.new("cogmesh.truncated", "Packet shorter than its type and counts need", expert.group.MALFORMED, expert.severity.ERROR),
  trailing = ProtoExpert.new("cogmesh.trailing", "Bytes after the message that are not an authentication trailer", expert.group.MALFORMED, expert.severity.ERROR),
  bad_field = ProtoExpert.new("cogmesh.bad_field", "Field value the wire format refuses", expert.group.MALFORMED, expert.severity.ERROR),
  unknown = ProtoExpert.new("cogmesh.unknown_type", "Unknown packet type", expert.group.MALFORMED, expert.severity.ERROR),
  unsigned = ProtoExpert.new("cogmesh.auth.absent", "Control message without an authentication trailer", expert.group.SECURITY, expert.severity.NOTE),
}
p.experts = { E.truncated, E.trailing, E.bad_field, E.unknown, E.unsigned }

-- Whether `need` bytes are there; if not, marks the packet truncated.
local function has(buf, tree, need, what)
  if buf:len() >= need then return true end
  tree:add_proto_expert_info(E.truncated, string.format("%s truncated: %d bytes, needs %d", what, buf:len(), need))
  return false
end

local function cost(v) return string.format(" (%.3f)", v / 1000) end

local function rreq(buf, tree)
  if not has(buf, tree, 27, "RREQ") then return nil end
  local t = tree:add(F.rreq, buf(0, 27))
  local fl = t:add(F.rreq_flags, buf(2, 1))
  fl:add(F.rreq_j, buf(2, 1)); fl:add(F.rreq_r, buf(2, 1)); fl:add(F.rreq_g, buf(2, 1))
  fl:add(F.rreq_d, buf(2, 1)); fl:add(F.rreq_u, buf(2, 1))
  if bit.band(buf(2, 1):uint(), 0x07) ~= 0 then fl:add_proto_expert_info(E.bad_field, "reserved flag bits set") end
  t:add(F.rreq_hops, buf(3, 1))
  t:add(F.rreq_id, buf(4, 4))
  t:add(F.rreq_dst, buf(8, 2))
  t:add(F.rreq_dst_seq, buf(10, 4))
  t:add(F.rreq_orig, buf(14, 2))
  t:add(F.rreq_orig_seq, buf(16, 4))
  t:add(F.rreq_ttl, buf(20, 1))
  t:add(F.rreq_first_hop, buf(21, 2))
  t:add(F.rreq_cost, buf(23, 4)):append_text(cost(buf(23, 4):uint()))
  return 27, string.format("RREQ %d -> %d, id %d, hops %d", buf(14, 2):uint(), buf(8, 2):uint(), buf(4, 4):uint(), buf(3, 1):uint())
end

local function rrep(buf, tree)
  if not has(buf, tree, 22, "RREP") then return nil end
  local t = tree:add(F.rrep, buf(0, 22))
  local fl = t:add(F.rrep_flags, buf(2, 1))
  fl:add(F.rrep_r, buf(2, 1)); fl:add(F.rrep_a, buf(2, 1))
  if bit.band(buf(2, 1):uint(), 0x3f) ~= 0 then fl:add_proto_expert_info(E.bad_field, "reserved flag bits set") end
  t:add(F.rrep_hops, buf(3, 1))
  t:add(F.rrep_dst, buf(4, 2))
  t:add(F.rrep_dst_seq, buf(6, 4))
  t:add(F.rrep_orig, buf(10, 2))
  t:add(F.rrep_lifetime, buf(12, 4))
  t:add(F.rrep_last_hop, buf(16, 2))
  t:add(F.rrep_cost, buf(18, 4)):append_text(cost(buf(18, 4):uint()))
  return 22, string.format("RREP %d -> %d, hops %d", buf(4, 2):uint(), buf(10, 2):uint(), buf(3, 1):uint())
end

local function rerr(buf, tree)
  if not has(buf, tree, 4, "RERR") then return nil end
  local n = buf(3, 1):uint()
  local len = 4 + 6 * n
  local t = tree:add(F.rerr, buf(0, math.min(len, buf:len())))
  local fl = t:add(F.rerr_flags, buf(2, 1))
  fl:add(F.rerr_n, buf(2, 1))
  if bit.band(buf(2, 1):uint(), 0x7f) ~= 0 then fl:add_proto_expert_info(E.bad_field, "reserved flag bits set") end
  local c = t:add(F.rerr_count, buf(3, 1))
  if n == 0 then c:add_proto_expert_info(E.bad_field, "no destination") end
  if not has(buf, t, len, "RERR") then return nil end
  for i = 0, n - 1 do
    local at = 4 + 6 * i
    t:add(F.rerr_dst, buf(at, 2))
    t:add(F.rerr_dst_seq, buf(at + 2, 4))
  end
  return len, string.format("RERR, %d unreachable", n)
end

local function hello(buf, tree)
  if not has(buf, tree, 11, "HELLO") then return nil end
  local count = buf(9, 1):uint()
  local nAt = 10 + 7 * count
  if not has(buf, tree, nAt + 1, "HELLO") then return nil end
  local ncount = buf(nAt, 1):uint()
  local len = nAt + 1 + 3 * ncount
  local t = tree:add(F.hello, buf(0, math.min(len, buf:len())))
  t:add(F.hello_src, buf(2, 2))
  t:add(F.hello_seq, buf(4, 4))
  t:add(F.hello_r1, buf(8, 1))
  t:add(F.hello_count, buf(9, 1))
  for i = 0, count - 1 do
    local at = 10 + 7 * i
    local ch = buf(at, 1):uint()
    local e = t:add(buf(at, 7), string.format("Workload: channel %d, w %.4f", ch, buf(at + 1, 2):uint() / 65535))
    local c = e:add(F.hello_w_channel, buf(at, 1))
    if ch == 0 then c:add_proto_expert_info(E.bad_field, "workload channel 0") end
    e:add(F.hello_w, buf(at + 1, 2))
    e:add(F.hello_w_windows, buf(at + 3, 4))
  end
  t:add(F.hello_ncount, buf(nAt, 1))
  if not has(buf, t, len, "HELLO") then return nil end
  for i = 0, ncount - 1 do
    local at = nAt + 1 + 3 * i
    local e = t:add(buf(at, 3), string.format("Neighbour %d, R1 on channel %d", buf(at, 2):uint(), buf(at + 2, 1):uint()))
    e:add(F.hello_n_addr, buf(at, 2))
    local c = e:add(F.hello_n_r1, buf(at + 2, 1))
    if buf(at + 2, 1):uint() == 0 then c:add_proto_expert_info(E.bad_field, "neighbour channel 0") end
  end
  return len, string.format("HELLO from %d, R1 on %d, %d workload, %d neighbours", buf(2, 2):uint(), buf(8, 1):uint(), count, ncount)
end

local function prefix(buf, tree)
  if not has(buf, tree, 13, "PREFIX") then return nil end
  local count = buf(12, 1):uint()
  local t = tree:add(F.prefix, buf(0, 13))
  t:add(F.prefix_orig, buf(2, 2))
  t:add(F.prefix_seq, buf(4, 4))
  t:add(F.prefix_hops, buf(8, 1))
  t:add(F.prefix_ttl, buf(9, 1))
  t:add(F.prefix_lifetime, buf(10, 2))
  t:add(F.prefix_count, buf(12, 1))
  local at = 13
  for _ = 1, count do
    if not has(buf, t, at + 2, "PREFIX") then return nil end
    local v = buf(at, 1):uint()
    local size = (v == 4 and 4) or (v == 6 and 16) or nil
    if size == nil then
      t:add(F.prefix_version, buf(at, 1)):add_proto_expert_info(E.bad_field, "IP version not 4 or 6")
      return nil
    end
    if not has(buf, t, at + 2 + size, "PREFIX") then return nil end
    local e = t:add(buf(at, 2 + size), "Prefix")
    e:add(F.prefix_version, buf(at, 1))
    e:add(F.prefix_length, buf(at + 1, 1))
    local net = v == 4 and e:add(F.prefix_ip4, buf(at + 2, 4)) or e:add(F.prefix_ip6, buf(at + 2, 16))
    e:append_text(string.format(": %s/%d", tostring(v == 4 and buf(at + 2, 4):ipv4() or buf(at + 2, 16):ipv6()), buf(at + 1, 1):uint()))
    if buf(at + 1, 1):uint() > size * 8 then net:add_proto_expert_info(E.bad_field, "prefix longer than the address") end
    at = at + 2 + size
  end
  t:set_len(at)
  return at, string.format("PREFIX from %d, %d prefixes, hops %d", buf(2, 2):uint(), count, buf(8, 1):uint())
end

local CONTROL = { [0x01] = rreq, [0x02] = rrep, [0x03] = rerr, [0x10] = hello, [0x11] = prefix }

-- The 43-byte trailer at `at` (docs/wire.md, Authentication).
local function trailer(buf, tree, at)
  local t = tree:add(F.auth, buf(at, AUTH_TRAILER_BYTES))
  local k = t:add(F.auth_key, buf(at, 2))
  if buf(at, 2):uint() == 0 then k:add_proto_expert_info(E.bad_field, "key id 0") end
  t:add(F.auth_index, buf(at + 2, 4))
  t:add(F.auth_pc, buf(at + 6, 4))
  t:add(F.auth_mac, buf(at + 10, 32))
  t:add(F.auth_tag, buf(at + 42, 1))
  return string.format(" [key %d, pc %d]", buf(at, 2):uint(), buf(at + 6, 4):uint())
end

local function data(buf, pinfo, tree, root, labelled)
  local hdr = labelled and 17 or 14
  if not has(buf, tree, hdr, "DATA") then return end
  local t = tree:add(F.data, buf(0, hdr))
  t:add(F.data_ttl, buf(2, 1))
  local proto = buf(3, 1):uint()
  local pr = t:add(F.data_proto, buf(3, 1))
  if PROTOS[proto] == nil then pr:add_proto_expert_info(E.bad_field, "unknown data protocol") end
  t:add(F.data_src, buf(4, 2))
  t:add(F.data_dst, buf(6, 2))
  t:add(F.data_flow, buf(8, 2))
  t:add(F.data_seq, buf(10, 4))
  local info = string.format("DATA %d -> %d, %s, flow %d, seq %d", buf(4, 2):uint(), buf(6, 2):uint(), PROTOS[proto] or tostring(proto), buf(8, 2):uint(), buf(10, 4):uint())
  if labelled then
    local label = buf(14, 3):uint()
    local l = t:add(F.data_label, buf(14, 3))
    if bit.band(label, 0xf00000) ~= 0 or label == 0 then l:add_proto_expert_info(E.bad_field, "flow label 0 or reserved bits set") end
    info = info .. string.format(", label 0x%05x", bit.band(label, 0x0fffff))
  end
  pinfo.cols.info:set(info)
  if buf:len() == hdr then return end
  local payload = buf(hdr):tvb()
  -- A host's whole IP packet goes to Wireshark's IP dissectors; the routers' own test traffic stays bytes.
  if proto == 4 then
    Dissector.get("ip"):call(payload, pinfo, root)
  elseif proto == 41 then
    Dissector.get("ipv6"):call(payload, pinfo, root)
  else
    t:add(F.data_payload, buf(hdr))
  end
end

function p.dissector(buf, pinfo, root)
  pinfo.cols.protocol = "cogmesh"
  local tree = root:add(p, buf())
  if buf:len() < 2 then
    tree:add_proto_expert_info(E.truncated, "packet shorter than its type and version")
    return
  end
  local ty = buf(0, 1):uint()
  tree:add(F.type, buf(0, 1))
  tree:add(F.version, buf(1, 1))
  tree:append_text(", " .. (TYPES[ty] or string.format("type 0x%02x", ty)))
  if ty == 0x20 or ty == 0x21 then
    data(buf, pinfo, tree, root, ty == 0x21)
    return
  end
  local f = CONTROL[ty]
  if f == nil then
    tree:add_proto_expert_info(E.unknown, string.format("unknown type 0x%02x", ty))
    return
  end
  -- The message's own length follows from its type and counts; an authentication trailer, when there, comes after it.
  local len, info = f(buf, tree)
  if len == nil then
    pinfo.cols.info:set((TYPES[ty]) .. " (malformed)")
    return
  end
  local rest = buf:len() - len
  if rest == AUTH_TRAILER_BYTES and buf(buf:len() - 1, 1):uint() == AUTH_TRAILER_TAG then
    info = info .. trailer(buf, tree, len)
  elseif rest > 0 then
    tree:add(buf(len), string.format("%d trailing bytes", rest)):add_proto_expert_info(E.trailing)
  else
    tree:add_proto_expert_info(E.unsigned)
  end
  pinfo.cols.info:set(info)
end

DissectorTable.get("ethertype"):add(ETHERTYPE, p)
