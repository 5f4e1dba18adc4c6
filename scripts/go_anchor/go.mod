module brigade/go_anchor

go 1.25
