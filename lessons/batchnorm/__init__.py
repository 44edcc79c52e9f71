"""The BatchNorm lesson (``/batchnorm``): running statistics, train() vs eval(), momentum, affine
and track_running_stats, with a hand-written BatchNorm checked against nn.BatchNorm1d/2d.

Module map, from the bottom up (``page`` is the only one that imports Streamlit):

- ``stream``: the synthetic data stream (per-channel Normal batches, a shift, a NaN), its
  deterministic batches, the page's mean/std boxes and the spatial-size cap.
- ``layer``: BNState and ``manual_batchnorm`` (torch's arithmetic, step by step); SimConfig,
  History and ``simulate`` (training on the stream) with its cost model; the notes' claims
  about the layer checked live (``notes_callouts``).
- ``modes``: train() vs eval() on one batch, the batch the page shows (ShownRun), the last
  update of the buffers, PyTorch's momentum against Keras'.
- ``real_modules``: the real nn.BatchNorm: built, its anatomy, its error on an input, and
  torchvision's FrozenBatchNorm2d against our eval().
- ``norms``: BatchNorm, LayerNorm, InstanceNorm and GroupNorm by hand and by the real modules.
- ``snippets``: the page's closing script (a real nn.BatchNorm on the same batches).
- ``notes_demos``: the notes' lessons run live (the formula, a batch of one and drop_last,
  evaluating twice), each with its script.
- ``figures``: the Plotly charts (running statistics, train()/eval() histograms, which cells
  each normalization pools) and the tables.
- ``explanations``: the page's longer texts, and what each section says about the live
  numbers as blocks (ViewBlock) the page draws.
- ``controls``: the number boxes (keys, ranges, defaults, help) and the other controls' choices.
- ``links``: the lesson's ready-made links.
- ``page``: the Streamlit page: the controls, the chart, the sections; its shared caches.
"""
