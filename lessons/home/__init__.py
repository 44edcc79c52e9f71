"""The Home page (``/``): what each lesson teaches, this process's environment, the
reproducibility switches and the shared image input. Its computation is shared with the
sidebar and lives in ``core.environment`` and ``core.seeding``; ``page.py`` draws it.
"""
