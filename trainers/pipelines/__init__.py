"""The seed pipelines, one module each: import the module you need."""
