"""Runbooks: the notebooks that reproduce each entry's problem and verify its fix, and the verification ledger.

runbook.py is what a notebook imports (Runbook; toolchains.py for hipcc and Triton). runner.py executes
notebooks with papermill (`errbook run`), each in its own process tree (proctree) with capped outputs (nbcap),
and appends a record per run to the ledger (ledger.py; what a valid record is: ledgerrec.py). slurm.py submits
runs to a fleet (`errbook run --slurm`), spool.py and slurmstate.py are the spool and what Slurm says,
slurmtask.py runs one array task, fleetmerge.py merges a spool into the ledger.
"""
