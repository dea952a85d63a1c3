# Sourced by every script here: moves to the repository root and builds target/benchmarks.jar
# (skipped with STAGGER_SKIP_BUILD=1; STAGGER_MVN_FLAGS=-o builds offline). Sets $module and $root.
module="$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)"
root="$(dirname "$module")"
cd "$root"
if [ -z "${STAGGER_SKIP_BUILD:-}" ]; then
    # shellcheck disable=SC2086 # the flags are words on purpose
    mvn -B -q ${STAGGER_MVN_FLAGS:-} -P fat-jars -pl stagger-benchmarks -am package -DskipTests \
        -Dmaven.javadoc.skip=true -Dmaven.source.skip=true
fi
