"""The organiser's guard against the bots it runs: the jail, the containers, the resource
limits and the watchdog that outlives no runner."""
