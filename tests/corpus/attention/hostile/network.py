# expect: partial
# assignment: attention
# base: reference
# message: PermissionError|not permitted
# listen_port: 47613
# listen_unix: /tmp/grader-hostile-network.sock
# why: functions connect to 127.0.0.1:47613, create an AF_INET socket and connect to a unix socket in /tmp; all must fail (errors for those functions), and nothing may reach the listeners the test opens

import socket

import torch


def attention_entropy(weights):
    conn = socket.create_connection(("127.0.0.1", 47613), timeout=2)
    conn.sendall(b"exfiltrated")
    conn.close()
    p = weights
    return -(p * torch.log(p.clamp_min(torch.finfo(p.dtype).tiny))).sum(-1)


def bag_of_past(v):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.sendto(b"exfiltrated", ("127.0.0.1", 47613))
    s.close()
    T = v.shape[-2]
    counts = torch.arange(1, T + 1, device=v.device, dtype=v.dtype)
    return v.cumsum(dim=-2) / counts.unsqueeze(-1)


def merge_heads(x):
    u = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    u.settimeout(2)
    u.connect("/tmp/grader-hostile-network.sock")
    u.sendall(b"exfiltrated")
    u.close()
    B, H, T, d = x.shape
    return x.transpose(1, 2).reshape(B, T, H * d)
