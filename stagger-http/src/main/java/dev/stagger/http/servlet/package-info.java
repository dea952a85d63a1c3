/**
 * The server half of Stagger's HTTP headers: a Jakarta Servlet filter that bounds the work of a
 * request by the caller's remaining deadline and answers a failure already decided with "do not
 * retry". The servlet API is provided by the container; the rest of stagger-http works without it.
 */
@NullMarked
package dev.stagger.http.servlet;

import org.jspecify.annotations.NullMarked;
