#!/usr/bin/env python3
"""Load on `reprise serve` from clients that take and do not give: IDLE
connections that say nothing, and UPLOADS concurrent uploads of MB
megabytes each, while GET /api/jobs is timed (REQUESTS of them). The same
requests are timed first with nothing else going on (the baseline, in the
same run). Prints a Markdown table; the server's peak resident memory is
read from /proc while it runs.
Usage: fleet-load.py PORT SERVER_PID TOKEN [IDLE] [UPLOADS] [MB] [REQUESTS]"""
import http.client
import os
import resource
import socket
import sys
import threading
import time

port, pid, token = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
idle_n, uploads_n, mb, requests_n = (int(a) for a in (sys.argv[4:] + ["1000", "5", "50", "200"][len(sys.argv[4:]):]))
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def rss_kib():
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def timed_gets(n):
    took = []
    for _ in range(n):
        start = time.monotonic()
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("GET", "/api/jobs", headers={"Authorization": f"Bearer {token}"})
        answer = conn.getresponse()
        answer.read()
        conn.close()
        assert answer.status == 200, answer.status
        took.append(time.monotonic() - start)
    took.sort()
    return took[len(took) // 2], took[min(len(took) - 1, int(len(took) * 0.99))], took[-1]


statuses = []


def upload(body):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        conn.request("POST", "/api/recordings", body=body,
                     headers={"Authorization": f"Bearer {token}", "Content-Type": "application/zip"})
        answer = conn.getresponse()
        answer.read()
        statuses.append(str(answer.status))
    except (BrokenPipeError, ConnectionResetError):
        # Answered (503) and closed before the body was all sent.
        statuses.append("cut")


base_rss = rss_kib()
baseline = timed_gets(requests_n)
peak = [rss_kib()]
done = threading.Event()


def sample():
    while not done.is_set():
        peak[0] = max(peak[0], rss_kib())
        time.sleep(0.02)


threading.Thread(target=sample, daemon=True).start()
idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(idle_n)]
body = b"PK\x03\x04" + os.urandom(mb * 1024 * 1024)
threads = [threading.Thread(target=upload, args=(body,)) for _ in range(uploads_n)]
for thread in threads:
    thread.start()
loaded = timed_gets(requests_n)
for thread in threads:
    thread.join()
done.set()
for conn in idle:
    conn.close()
ms = lambda s: f"{s * 1000:.0f} ms"
print(f"| GET /api/jobs ({requests_n} requests) | p50 | p99 | max |")
print("|---|---|---|---|")
print(f"| nothing else (baseline) | {ms(baseline[0])} | {ms(baseline[1])} | {ms(baseline[2])} |")
print(f"| {idle_n} idle connections + {uploads_n} uploads of {mb} MB | {ms(loaded[0])} | {ms(loaded[1])} | {ms(loaded[2])} |")
print()
print(f"Server memory: {base_rss / 1024:.0f} MiB before, {peak[0] / 1024:.0f} MiB at its peak; "
      f"uploads answered {sorted(statuses)} (400: read whole and checked, not an export; cut: refused with 503 before their bodies were read, too many at once).")
