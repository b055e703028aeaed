"""Run records, statistics, findings, reports and plots. Reads records; never plays games."""
