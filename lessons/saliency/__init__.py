"""The saliency lesson: which pixels drive a real ImageNet classifier's decision.

Module map (only ``page`` imports Streamlit):

- ``page``: the Streamlit page, a story of short functions; its shared caches stay there, in
  sight, and its maps and sanity checks go through ui.heavy.heavy_result (click, queue, one
  computation for the whole server).
- ``models``: the classifiers: offline EfficientNet-Lite0, torchvision weights from the local
  hub cache, and uploaded weights (weights only: nothing in a file is ever run).
- ``maps``: the maps themselves: the four gradient methods, what a run costs, the cascading
  randomization test, the page's choice of one map (``MapChoice``), and the notes' callout
  about the backward pass (``notes_callouts``, read by core.notes).
- ``scaling``: a map in grey levels, the app's way and the notes' (000:2), compared.
- ``pictures``: colour, overlay and PNG: the pictures the page shows of one map.
- ``sanity``: the randomization test's pieces: layers, re-drawing, rank correlation, the
  reading and its chart.
- ``snippet``: the code under the page that reproduces its map.
- ``explanations``: the page's words: names of its choices, help, the texts tied to the live
  numbers.
- ``shared_runs``: the measured time per image through each model, and the estimates it
  announces runs with.
- ``session``: what one run of the page works with: the classifier, the image as it sees it
  (and its top-5), the map on screen.
- ``links``: the lesson's ready-made links.
"""
