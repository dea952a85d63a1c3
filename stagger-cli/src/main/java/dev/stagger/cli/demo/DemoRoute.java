package dev.stagger.cli.demo;

import com.fasterxml.jackson.databind.JsonNode;

/** One JSON endpoint of the demo: {@code POST /api/<name>} (or GET with query parameters as fields). */
interface DemoRoute {
    /** @return any Jackson-serialisable object; thrown IllegalArgumentExceptions become 400s */
    Object handle(JsonNode request) throws Exception;
}
