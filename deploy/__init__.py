"""Running the explorer as several replicas behind HAProxy (see README.md here). A regular package, so that
`deploy.replicas` resolves to this folder whatever else is installed."""
