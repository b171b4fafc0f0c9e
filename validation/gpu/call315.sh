#!/usr/bin/env bash
# Device call 315 (2026-12-08, fiftieth session; the H100 of calls 313-314, still warm): the
# 21 grouped layers of the issue-6 suite again alone, float16 then bfloat16, under call
# 314's model (its files, left in /tmp/res/model on that machine, over the tree's older
# ones): a second sample of the category at the 2x line. Run as one command line:
export RES=/tmp/res315; source validation/gpu/env.sh; cp /tmp/res/model/*.txt /tmp/res/model/*.json models/h100/ && grep -q '"schema_version": 22' models/h100/schema.json || exit 1; trap pack EXIT; envinfo | tee $RES/env.txt; suite grouped_fp16 110 "" "*resnext*conv2*"; suite grouped_bf16 110 bfloat16 "*resnext*conv2*"
