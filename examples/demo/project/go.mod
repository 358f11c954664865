module example.com/libparse

go 1.21
