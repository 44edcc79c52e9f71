"""Error doctor: paste a PyTorch error, get the notes' entry, the cause and the fix, run live."""
