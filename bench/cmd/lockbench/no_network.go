package main

// clientOnlyVariants are the go-redis based variants (plain client) with redishook.AnswerLocally
// installed. rueidislock has no hook point and is left out.
func clientOnlyVariants(addr string) ([]variant, error) {
	var out []variant
	for _, build := range []func() (variant, error){
		func() (variant, error) { return leaseVariant(addr, 1, true, leaseDefault, noNetwork) },
		func() (variant, error) { return leaseVariant(addr, 1, false, leaseDefault, noNetwork) },
		func() (variant, error) { return redislockVariant(addr, 1, noNetwork) },
		func() (variant, error) { return redsyncVariant(addr, 1, noNetwork) },
	} {
		v, err := build()
		if err != nil {
			for _, o := range out {
				o.close()
			}
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}
