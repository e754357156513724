package netclass

import (
	"net/netip"
	"testing"
)

func TestClass(t *testing.T) {
	for addr, want := range map[string]string{
		"93.184.216.34":          "public",
		"2606:4700::1111":        "public",
		"169.254.169.254":        "metadata",
		"::ffff:169.254.169.254": "metadata",
		"fd00:ec2::254":          "metadata",
		"0.0.0.0":                "unspecified",
		"::":                     "unspecified",
		"127.0.0.1":              "loopback",
		"127.1.2.3":              "loopback",
		"::1":                    "loopback",
		"::ffff:127.0.0.1":       "loopback",
		"169.254.1.1":            "link_local",
		"fe80::1%eth0":           "link_local",
		"224.0.0.1":              "multicast",
		"ff02::1":                "multicast",
		"10.1.2.3":               "private",
		"172.16.0.1":             "private",
		"192.168.1.1":            "private",
		"100.64.0.1":             "private",
		"fd12:3456::1":           "private",
		"255.255.255.255":        "reserved",
		"0.1.2.3":                "reserved",
		"240.0.0.1":              "reserved",
		"198.18.0.1":             "reserved",
		"64:ff9b::a9fe:a9fe":     "reserved",
		"2002:a9fe:a9fe::1":      "reserved",
		"2001:0:a9fe:a9fe::1":    "reserved",
		"::a9fe:a9fe":            "reserved",
	} {
		if got := Class(netip.MustParseAddr(addr)); got != want {
			t.Errorf("Class(%s) = %s, want %s", addr, got, want)
		}
	}
	if got := Class(netip.Addr{}); got != "reserved" {
		t.Errorf("Class(invalid) = %s, want reserved", got)
	}
}
