package runtime

import "testing"

func TestSetHashLine(t *testing.T) {
	const h = "$argon2id$v=19$m=64,t=1,p=1$c2FsdHNhbHQ$AAAAAAAAAAAAAAAAAAAAAA"
	const line = `passphrase_hash = "` + h + `"`
	tests := []struct {
		name string
		in   string
		want string
	}{
		{name: "replaces the line in [security]",
			in:   "a = 1\n[security]\nautonomy = \"full\"\npassphrase_hash = \"\" # set me\n[sandbox]\n",
			want: "a = 1\n[security]\nautonomy = \"full\"\n" + line + "\n[sandbox]\n"}, // the whole line is replaced
		{name: "keeps CRLF",
			in:   "[security]\r\npassphrase_hash = \"old\"\r\n",
			want: "[security]\r\n" + line + "\r\n"},
		{name: "inserts after the header",
			in:   "[security]\nautonomy = \"full\"\n[sandbox]\npassphrase_hash = \"not this one\"\n",
			want: "[security]\n" + line + "\nautonomy = \"full\"\n[sandbox]\npassphrase_hash = \"not this one\"\n"},
		{name: "header with a comment, last table, no final newline",
			in:   "[security] # gate\nautonomy = \"full\"",
			want: "[security] # gate\n" + line + "\nautonomy = \"full\""},
		{name: "header as the last line",
			in:   "[security]",
			want: "[security]\n" + line + "\n"},
		{name: "appends a table",
			in:   "[sandbox]\ntimeout = \"30s\"",
			want: "[sandbox]\ntimeout = \"30s\"\n\n[security]\n" + line + "\n"},
		{name: "empty file",
			in:   "",
			want: "\n[security]\n" + line + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(SetHashLine([]byte(tt.in), h)); got != tt.want {
				t.Fatalf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}
