module github.com/google/pprof

go 1.26.0
