#!/usr/bin/env bash
# SIGTERM under load loses no acknowledged report: the durability harness
# (test_durability.sh) with the server stopped by SIGTERM (drain, commit,
# exit) instead of SIGKILL, on a smaller project.
exec env KILL_SIGNAL=TERM NWU=60 KILL_AFTER_ACKS=20 LIMIT=120 \
    bash "$(dirname "$0")/test_durability.sh"
