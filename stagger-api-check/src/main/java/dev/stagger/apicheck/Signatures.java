package dev.stagger.apicheck;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * Turns JVM descriptors and generic signatures (JVMS 4.3 and 4.7.9.1) into Java source notation,
 * reporting every class name it meets, so the dump reads like the declarations it came from and the
 * check can see which types a signature mentions.
 */
final class Signatures {

    private final String text;
    private final Consumer<String> seen;
    private int at;

    private Signatures(String text, Consumer<String> seen) {
        this.text = text;
        this.seen = seen;
    }

    /** A field type from its descriptor or signature. */
    static String type(String signature, Consumer<String> seen) {
        return new Signatures(signature, seen).type();
    }

    /** Type parameters, parameter types, result and thrown types of a method. */
    record Method(String typeParameters, List<String> parameters, String result, List<String> thrown) {
    }

    static Method method(String signature, Consumer<String> seen) {
        Signatures s = new Signatures(signature, seen);
        String typeParameters = s.typeParameters();
        s.expect('(');
        List<String> parameters = new ArrayList<>();
        while (s.peek() != ')') {
            parameters.add(s.type());
        }
        s.expect(')');
        String result = s.type();
        List<String> thrown = new ArrayList<>();
        while (s.at < s.text.length() && s.peek() == '^') {
            s.at++;
            thrown.add(s.type());
        }
        return new Method(typeParameters, parameters, result, thrown);
    }

    /** Type parameters, superclass and interfaces of a class. */
    record Type(String typeParameters, String superclass, List<String> interfaces) {
    }

    static Type classSignature(String signature, Consumer<String> seen) {
        Signatures s = new Signatures(signature, seen);
        String typeParameters = s.typeParameters();
        String superclass = s.type();
        List<String> interfaces = new ArrayList<>();
        while (s.at < s.text.length()) {
            interfaces.add(s.type());
        }
        return new Type(typeParameters, superclass, interfaces);
    }

    private String typeParameters() {
        if (peek() != '<') {
            return "";
        }
        at++;
        StringBuilder out = new StringBuilder("<");
        boolean first = true;
        while (peek() != '>') {
            if (!first) {
                out.append(", ");
            }
            first = false;
            int colon = text.indexOf(':', at);
            out.append(text, at, colon);
            at = colon;
            List<String> bounds = new ArrayList<>();
            while (peek() == ':') {
                at++;
                if (peek() != ':') {
                    String bound = type();
                    if (!bound.equals("java.lang.Object")) {
                        bounds.add(bound);
                    }
                }
            }
            if (!bounds.isEmpty()) {
                out.append(" extends ").append(String.join(" & ", bounds));
            }
        }
        at++;
        return out.append('>').toString();
    }

    private String type() {
        char c = text.charAt(at++);
        switch (c) {
            case 'B': return "byte";
            case 'C': return "char";
            case 'D': return "double";
            case 'F': return "float";
            case 'I': return "int";
            case 'J': return "long";
            case 'S': return "short";
            case 'Z': return "boolean";
            case 'V': return "void";
            case '[': return type() + "[]";
            case 'T': {
                int end = text.indexOf(';', at);
                String variable = text.substring(at, end);
                at = end + 1;
                return variable;
            }
            case 'L': return classType();
            default: throw new IllegalStateException("bad signature " + text + " at " + (at - 1));
        }
    }

    private String classType() {
        StringBuilder binary = new StringBuilder();
        StringBuilder out = new StringBuilder();
        while (true) {
            int start = at;
            while (";<.".indexOf(peek()) < 0) {
                at++;
            }
            String part = text.substring(start, at);
            if (binary.length() > 0) {
                binary.append('$');
                out.append('.');
            }
            binary.append(part);
            out.append(part.replace('/', '.').replace('$', '.'));
            if (peek() == '<') {
                at++;
                List<String> arguments = new ArrayList<>();
                while (peek() != '>') {
                    char c = peek();
                    if (c == '*') {
                        at++;
                        arguments.add("?");
                    } else if (c == '+') {
                        at++;
                        arguments.add("? extends " + type());
                    } else if (c == '-') {
                        at++;
                        arguments.add("? super " + type());
                    } else {
                        arguments.add(type());
                    }
                }
                at++;
                out.append('<').append(String.join(", ", arguments)).append('>');
            }
            if (peek() == '.') {
                at++;
                continue;
            }
            at++;
            seen.accept(binary.toString());
            return out.toString();
        }
    }

    private char peek() {
        return text.charAt(at);
    }

    private void expect(char c) {
        if (text.charAt(at++) != c) {
            throw new IllegalStateException("bad signature " + text + " at " + (at - 1));
        }
    }
}
