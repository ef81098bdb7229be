"""``bench.latency_writer``'s command line takes any token, one beginning with ``-`` too."""

from __future__ import annotations

from bench import latency_writer


def test_a_token_that_looks_like_an_option_is_still_the_token() -> None:
    argv = latency_writer.command_arguments(
        "http://127.0.0.1:1", "-iuQCm_token", "ns", objects=5, rate=200.0, seconds=1.0
    )

    parsed = latency_writer.argument_parser().parse_args(argv)

    assert (parsed.url, parsed.token, parsed.namespace) == (
        "http://127.0.0.1:1",
        "-iuQCm_token",
        "ns",
    )
    assert (parsed.objects, parsed.rate, parsed.seconds) == (5, 200.0, 1.0)
