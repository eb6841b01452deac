"""Reading documents: PDF pages with rebuilt lines and tables, statements, chunks, page text."""
