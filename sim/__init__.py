"""The FuseFlow simulator: fibertree formats, streaming blocks and cycle-accurate engines."""
