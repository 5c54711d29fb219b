import { render } from 'preact';
import '../estilo.css';
import './portal.css';
import { Portal } from './app';

const raiz = document.getElementById('app');
if (raiz) render(<Portal />, raiz);
