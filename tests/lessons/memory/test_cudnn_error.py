"""The notes' cuDNN error (002:1360-1367) as an OOM in disguise (lessons.memory.cudnn_error)."""

from __future__ import annotations

import re

import pytest

from lessons.memory import cudnn_error


def test_conv_oom_demo_smaller_batch_fits():
    rows = cudnn_error.conv_oom_demo()
    assert [(r.batch, r.failed_at) for r in rows] == [(56, "workspace"), (48, ""), (32, "")]
    assert rows[0].error.startswith("CUDA out of memory. Tried to allocate 1024.00 MiB.")
    assert rows[1].ok and not rows[0].ok
    with pytest.raises(ValueError, match=re.escape("batches must be positive, got ()")):
        cudnn_error.conv_oom_demo(())


def test_conv_oom_rows_name_where_memory_ran_out():
    rows = cudnn_error.conv_oom_rows(cudnn_error.conv_oom_demo((200, 56, 32)))
    assert [r["result"] for r in rows] == ["OOM at the activations", "OOM at the workspace", "fits"]
    assert rows[1]["workspace"] == "1024.00 MiB" and rows[2]["allocator message"] == ""
