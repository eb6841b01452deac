"""The synthetic filings generator and small fixtures."""
