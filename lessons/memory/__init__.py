"""The CUDA memory lesson (``/memory``): allocated, reserved and device memory, live on a real
GPU or on a simulated one that follows PyTorch's caching allocator, and what the notes teach
about GPU memory, checked live.

Module map (``page.py`` is the only one that imports Streamlit):

- ``page.py``: the story: controls, live chart, the scenario's steps, inside the allocator, the
  notes' lessons and the snippet.
- ``allocator_sim.py``: the caching-allocator model (rounding, pools, best fit, splitting,
  merging, ``empty_cache``, retry and OOM), ``format_size``.
- ``gpu_memory.py``: readings of a real GPU from torch and NVML that never crash.
- ``backends.py``: one interface over a real device and the simulated one, the session's
  tensors (``TensorLedger``), the actions (allocate, free, empty_cache, reset_peak) and their
  one-line explanations, the Allocate form's request, the shared-GPU policy.
- ``scenarios.py``: the guided scenarios as data and their runner (``ScenarioRun``).
- ``cuda_snippet.py``: steps as real ``torch.cuda`` code, and ``SnippetLog`` (what a session did).
- ``figures.py``: the live chart, the segment map, the fragmentation bars, their alt texts.
- ``live_sampler.py``: one background sampler per process for the real GPUs' live chart.
- ``explanations.py``: the page's words: control help, notices, the numbers under the chart.
- ``allocator_rule.py``: the notes' allocator passage (000:4-5) checked claim by claim, and
  the "the notes say / PyTorch today does" callouts.
- ``eval_memory.py``: what evaluation without ``torch.no_grad()`` keeps alive (004:49-53).
- ``map_location.py``: ``torch.load`` and ``map_location`` (000:63, 000:76).
- ``cudnn_error.py``: "Unable to find a valid cuDNN algorithm" as an OOM (002:1360-1367).
- ``links.py``: the lesson's ready-made links.
"""
