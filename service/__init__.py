"""Client for the reservation service: auth, paging, filters, throttling, errors."""
