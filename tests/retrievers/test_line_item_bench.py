"""bench/line_item_recall.py decides its truth from the page: a line starting with the item's label and
printing an amount on that line, never a mention in prose or a label without a figure."""

from bench.line_item_recall import holding, main


def test_a_row_holds_the_item_only_with_an_amount_on_its_own_line():
    texts = [
        "CONSOLIDATED BALANCE SHEETS\nTotal assets $ 352,755 $ 351,002\nTotal liabilities 290,437 287,912",
        "Total assets increased in the year as we issued debt.",  # prose: no amount on the line
        "Total assets\n2022 2021",  # a label whose figures are not on its line
        "Net revenues $ 7,287 $ 6,806",
        "Total liabilities and shareholders' equity 352,755 351,002",
    ]
    assert holding(texts, "total assets") == {0}
    assert holding(texts, "total liabilities") == {0}  # not the "... and shareholders' equity" total
    assert holding(texts, "total revenue") == {3}


def test_a_folder_that_is_no_index_is_one_line_naming_the_build(tmp_path, capsys):
    assert main(["--index", str(tmp_path)]) == 2
    assert "collate build --index" in capsys.readouterr().err
