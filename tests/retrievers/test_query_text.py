"""A question's instructions to its answerer are not searched; its content, and the sources it names, are."""

from __future__ import annotations

import pytest

from retrievers.indexing.query_text import strip_instructions


@pytest.mark.parametrize(
    ("question", "searched"),
    [
        # a role to play, with the sources it names kept, and the question after "Here's the question:"
        (
            "You are an equity analyst and your only resources are: the balance sheet and the cash flow "
            "statement. Here's the question: what was the current ratio of Acme in FY2021?",
            "the balance sheet and the cash flow statement what was the current ratio of Acme in FY2021?",
        ),
        # the answer's unit and rounding, in parentheses and as a sentence
        (
            "What was Acme's revenue growth in FY2020 (in units of percents and round to two decimal places)? "
            "Answer in USD billions.",
            "What was Acme's revenue growth in FY2020?",
        ),
        # where to look: the source is kept, the instruction around it goes
        (
            "What was capital expenditure in 2019? Please rely on the details shown within the statement of "
            "cash flows.",
            "What was capital expenditure in 2019? the statement of cash flows",
        ),
        (
            "According to the figures stated only in the income statement, what was the gross margin?",
            "the income statement what was the gross margin?",
        ),
        # what to write when the measure does not fit: the consequent goes, the condition names the subject
        (
            "Is the quick ratio healthy? If the quick ratio is not relevant here, then state that and explain why.",
            "Is the quick ratio healthy? the quick ratio is not relevant here",
        ),
        # a role that only sets a scene goes whole, even with subject words in it
        (
            "Answer as if you are a banker who lost internet connection. Who are the customers?",
            "Who are the customers?",
        ),
    ],
)
def test_english_instructions_are_dropped_and_content_kept(question, searched):
    assert strip_instructions(question) == searched


@pytest.mark.parametrize(
    "question",
    [
        "What are the geographies that the company primarily operates in?",
        "Explain the drivers of the change in gross margin.",  # imperative, but content: nothing of answering
        "Calculate EBITDA using operating income and D&A (from the cash flow statement).",
        "If the company went bankrupt, how much would each shareholder get?",  # a hypothetical question
    ],
)
def test_questions_without_instructions_are_searched_as_written(question):
    assert strip_instructions(question) == question


@pytest.mark.parametrize(
    ("question", "searched"),
    [
        (
            "假设你是一名证券分析师，请根据2022年年报中的合并利润表回答：公司的营业收入是多少？（单位：亿元，保留两位小数）",
            "2022年年报中的合并利润表 公司的营业收入是多少？",
        ),
        (
            "2022年资本充足率最高的三家银行是哪些？请以百分比为单位，保留两位小数。",
            "2022年资本充足率最高的三家银行是哪些？",
        ),
        ("作为一名投资者，公司面临的主要风险有哪些？请简要说明原因。", "公司面临的主要风险有哪些？"),
    ],
)
def test_chinese_instructions_are_dropped(question, searched):
    assert strip_instructions(question) == searched


def test_a_query_that_is_all_instruction_is_searched_as_given():
    assert (
        strip_instructions("Round your answer to two decimal places.")
        == "Round your answer to two decimal places."
    )
    assert (
        strip_instructions("营业收入 (合并利润表)") == "营业收入 (合并利润表)"
    )  # a field description passes through
