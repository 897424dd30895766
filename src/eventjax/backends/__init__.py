"""One bridge per backend; see README.md in this folder."""
