"""The class mode: a teacher puts questions to a room, students answer on their phones, the projector reveals."""
