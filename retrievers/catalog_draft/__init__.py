"""A catalog drafted from a folder of PDFs: id, company, symbol, fiscal year, doctype and language read
from each file's first pages by rules (SEC covers, A-share covers), with a confidence and a source."""
