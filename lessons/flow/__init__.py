"""The Flow hole-filling lesson: optical flow with NaN holes, filled by multi-scale masked means.

Module map (only ``page`` imports Streamlit; the others are pure):

- ``page`` -- the Streamlit page: reads the widgets, keeps the shared results, draws.
- ``gradual_mean`` -- the notes' method, fast (``gradual_mean_fill``, cv2 and torch backends),
  each scale's mean (``scale_means``) and the checks every flow function shares.
- ``references`` -- what the fast fill is measured against: the notes' avg_pool2d version (the
  reference), a per-pixel loop, and the notes' first NumPy loop reproduced bit for bit.
- ``notes_as_printed`` -- the notes' own code, transcribed as printed (tests and the benchmark
  compare the app's versions with it).
- ``fill`` -- a case to fill (``FlowSpec``, ``FlowCase``), the methods the page runs on it, their
  scores (endpoint error) and expected cost; the entry point the page and tests/app use.
- ``sources`` -- synthetic fields with ground truth, Farneback flow from image pairs, images.
- ``masks`` -- hole masks: random, blobs, stripes, border band, forward-backward check.
- ``flow_files`` -- ``.flo`` / ``.npy`` flow files, their headers checked before their data.
- ``baselines`` -- the usual alternatives: nearest-valid fill and ``cv2.inpaint``.
- ``notes_checks`` -- the notes' "about 3 ms" claim and window check, run live (callouts).
- ``figures`` -- flow colour images, heat maps and bar charts (plotly), from the results.
- ``explanations`` -- the page's longer sentences, tied to the live numbers (marked text).
- ``menus`` -- what the controls offer: choices, labels, help.
- ``snippets`` -- the Python snippets that rebuild the page's view.
- ``shared_results`` -- the store that computes each fill once for every session.
- ``links`` -- the lesson's ready-made links.
"""
