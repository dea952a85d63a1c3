package dev.stagger;

/** The stateless jitters of {@link Jitter}, as singletons; not API. */
enum StandardJitter implements Jitter {
    NONE {
        @Override
        public double apply(double d, RandomSource random) {
            return d;
        }
    },
    FULL {
        @Override
        public double apply(double d, RandomSource random) {
            return d * random.nextDouble();
        }
    },
    EQUAL {
        @Override
        public double apply(double d, RandomSource random) {
            return d / 2 + d / 2 * random.nextDouble();
        }
    }
}
