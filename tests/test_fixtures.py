"""The shared fixtures hand each test what its name says (a wrong one makes a passing test test nothing)."""


def test_the_populated_database_is_on_the_tests_storage_backend(populated_db, backend):
    assert (populated_db.path is not None) == (backend == "sqlite"), (backend, populated_db.location)
