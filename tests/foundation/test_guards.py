"""The test guards themselves: a real LM call or a non-loopback connection must fail loudly."""

import socket

import dspy
import pytest
from dspy.utils.dummies import DummyLM


class Echo(dspy.Signature):
    """Answer the question."""

    question: str = dspy.InputField()
    answer: str = dspy.OutputField()


def test_real_lm_call_is_refused():
    dspy.configure(lm=dspy.LM("openai/gpt-4o-mini", api_key="sk-not-real", num_retries=0))
    with pytest.raises(RuntimeError, match="Real LM call attempted in a test"):
        dspy.Predict(Echo)(question="hi")


def test_dummy_lm_is_allowed():
    dspy.configure(lm=DummyLM({"": {"answer": "fine"}}))
    assert dspy.Predict(Echo)(question="hi").answer == "fine"


def test_non_loopback_network_is_refused():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        with pytest.raises(RuntimeError, match="Network access"):
            s.connect(("10.255.255.1", 80))
    finally:
        s.close()


def test_evaluate_is_this_repo_not_the_pypi_package():
    import evaluate

    assert evaluate.__file__.endswith("evaluate/__init__.py")
    assert "site-packages" not in evaluate.__file__
