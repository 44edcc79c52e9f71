"""The affine warp lesson: an OpenCV matrix ``M`` through ``F.affine_grid`` + ``F.grid_sample``,
checked against ``cv2.warpAffine``, and the notes' half-pixel-off ``affine2theta`` beside it.

Module map (each imports only the ones above it, and only ``page.py`` imports Streamlit):

- ``validation.py``: what the lesson accepts (sizes, modes, devices, the output cap) and the
  checks whose ``ValueError`` says why an input is refused.
- ``cost.py``: what one view costs the page, and the top-left corner shown while a costly view
  waits for a click.
- ``theta.py``: ``M`` to ``theta = N_src M^-1 N_dst^-1`` and back (``theta_to_affine``, which
  shows the matrix the notes' theta really applies), the notes' ``affine2theta``, the matrices
  the page prints.
- ``matrix_inputs.py``: the three ways to define ``M`` (sliders, typed entries, point pairs).
- ``sampling.py``: where grid_sample reads each output pixel, next to where OpenCV reads it.
- ``affine.py``: the two warps and the flag mapping between them, ``compare_warps`` (everything
  the page shows for one warp; ``WarpCase`` is its key), and the notes' claim on affine_grid's
  size checked live (``notes_callouts``).
- ``canvas.py``: the output size is OpenCV's ``dsize``, measured on the current warp; the preset
  sizes.
- ``timing.py``: both paths timed. ``snippet.py``: the code that reproduces the current warp.
- ``figures.py``: the Plotly figures and the image previews they draw.
- ``captions.py``: the page's sentences with live numbers, its help texts and alt texts.
- ``links.py``: the lesson's ready-made links. ``page.py``: the Streamlit page.
"""
