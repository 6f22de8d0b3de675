package api

// The CSV answers of A.15 (the IVA summary's formato=csv and the export's
// indice.csv) carry text others control: a supplier writes its own name
// and codes in the XML it sends. A spreadsheet that opens the file runs a
// cell that starts with =, +, - or @ (or a tab or carriage return before
// one) as a formula: CSV or formula injection. Text cells go through
// CSVText; amount cells through CSVNumber, so that -12.50 stays a number.

// CSVText neutralises a text cell a spreadsheet would read as a formula:
// one starting with =, +, -, @, a tab or a carriage return gets a leading
// apostrophe, which spreadsheets read as "this is text" (and which a
// program reading the file sees as part of the value). Every other cell,
// empty included, is returned as is.
func CSVText(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '=', '+', '-', '@', '\t', '\r':
		return "'" + s
	}
	return s
}

// CSVNumber passes an amount through when it is a plain decimal (an
// optional leading minus, digits, an optional point and digits: what
// decimal.Decimal writes), which a spreadsheet reads as a number and never
// as a formula; anything else is text and goes through CSVText.
func CSVNumber(s string) string {
	if isPlainDecimal(s) {
		return s
	}
	return CSVText(s)
}

func isPlainDecimal(s string) bool {
	if len(s) > 0 && s[0] == '-' {
		s = s[1:]
	}
	digits, point := 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' && !point && digits > 0 && i < len(s)-1:
			point = true
		default:
			return false
		}
	}
	return digits > 0
}
