"""The bottom layer: helpers every layer may use, importing nothing of rose_core (problem lists, solver labels,
CSV safety, shared statistics, the chat-endpoint client)."""
