import pytest

from wasmsched.framework.status import Code, Status, code_name, is_success


@pytest.mark.parametrize(
    ("code", "rejected", "error"),
    [
        (Code.SUCCESS, False, False),
        (Code.ERROR, False, True),
        (Code.UNSCHEDULABLE, True, False),
        (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, True, False),
        (Code.WAIT, False, False),
        (Code.SKIP, False, False),
        (Code.PENDING, True, False),
        (7, False, True),
        (-2147483648, False, True),
        (2147483647, False, True),
    ],
)
def test_rejected_and_error_classes(code: int, rejected: bool, error: bool) -> None:
    status = Status(code, "why")
    assert status.is_rejected() is rejected
    assert status.is_error() is error


def test_codes_match_the_abi() -> None:
    assert [int(c) for c in Code] == [0, 1, 2, 3, 4, 5, 6]
    assert code_name(3) == "UnschedulableAndUnresolvable"
    assert code_name(99) == "Code(99)"


def test_message_joins_reasons_and_drops_empty_ones() -> None:
    status = Status(Code.UNSCHEDULABLE, "Insufficient cpu", "", "Insufficient memory")
    assert status.reasons == ("Insufficient cpu", "Insufficient memory")
    assert status.message == "Insufficient cpu, Insufficient memory"


def test_none_is_success() -> None:
    assert is_success(None)
    assert is_success(Status(Code.SUCCESS))
    assert not is_success(Status(Code.SKIP))
