"""schedule.rs/v1."""
