"""The machine: what this (or another) machine is, and which known problems it is exposed to.

facts/ collects and reads machine facts; checks.py evaluates entries' machine checks on them; doctor.py is the
report of `errbook doctor`. tiers.py says which runbook tiers this machine can run; fingerprint.py is the one
classifier of a run's platform. pyprobe.py is a standalone script run inside the Python being probed.
"""
